import { describe, expect, it } from 'vitest';
import { formatDay } from './format';
import { describeSchedule, formatPayDate, formatPeriod, type PaySchedule } from './schedule';

const schedule = (fields: Partial<PaySchedule>): PaySchedule => ({
  frequency: 'monthly',
  pay_day: null,
  anchor_date: null,
  next_pay_date: '2026-11-28',
  next_period: { start: '2026-10-01', end: '2026-10-31' },
  ...fields,
});

describe('formatDay', () => {
  it('reads a calendar day in UTC, so no time zone moves it to the day before', () => {
    expect(formatDay('2026-11-28')).toBe('Nov 28, 2026');
    expect(formatDay('2027-01-01')).toBe('Jan 1, 2027');
    expect(formatDay(null)).toBe('—');
  });

  it('shows a period with an open end as "…"', () => {
    expect(formatPeriod('2026-10-01', '2026-10-31')).toBe('Oct 1, 2026 – Oct 31, 2026');
    expect(formatPeriod('2026-10-01', null)).toBe('Oct 1, 2026 – …');
    expect(formatPeriod(null, null)).toBe('—');
  });
});

describe('describeSchedule', () => {
  it('names each kind with its anchor', () => {
    expect(describeSchedule(schedule({ pay_day: 28 }))).toBe('Monthly on the 28th');
    expect(describeSchedule(schedule({ pay_day: 1 }))).toBe('Monthly on the 1st');
    expect(describeSchedule(schedule({ pay_day: 22 }))).toBe('Monthly on the 22nd');
    expect(describeSchedule(schedule({ pay_day: 13 }))).toBe('Monthly on the 13th');
    expect(describeSchedule(schedule({ pay_day: 30 }))).toBe('Monthly on the 30th (the last day in shorter months)');
    expect(describeSchedule(schedule({ pay_day: 31 }))).toBe('Monthly on the last day');
    expect(describeSchedule(schedule({ frequency: 'semi_monthly' }))).toBe('Twice a month, on the 15th and the last day');
    expect(describeSchedule(schedule({ frequency: 'biweekly', anchor_date: '2026-12-04' }))).toBe('Every two weeks from Dec 4, 2026');
    expect(describeSchedule(schedule({ frequency: 'weekly', anchor_date: '2026-12-04' }))).toBe('Every week from Dec 4, 2026');
  });
});

describe('formatPayDate', () => {
  it("is the timestamp's UTC day: a run's pay date (midnight UTC) never reads as the day before", () => {
    expect(formatPayDate('2026-11-28T00:00:00.000Z')).toBe('Nov 28, 2026');
    expect(formatPayDate(null)).toBe('—');
  });
});
