import { describe, expect, it } from 'vitest';
import { nextPayDate, nextPayment, periodFor, type PaySchedule } from './pay-schedule.js';

const monthly = (payDay: number): PaySchedule => ({ frequency: 'monthly', payDay });
const semi: PaySchedule = { frequency: 'semi_monthly' };
const weekly = (anchorDate: string): PaySchedule => ({ frequency: 'weekly', anchorDate });
const biweekly = (anchorDate: string): PaySchedule => ({ frequency: 'biweekly', anchorDate });

describe('monthly', () => {
  it('pays on the pay day of this month, or of the next once it has passed', () => {
    expect(nextPayDate(monthly(28), '2026-11-01')).toBe('2026-11-28');
    expect(nextPayDate(monthly(28), '2026-11-28')).toBe('2026-11-28');
    expect(nextPayDate(monthly(28), '2026-11-29')).toBe('2026-12-28');
  });

  it('clamps the 31st (and the 29th, 30th) to the last day of shorter months', () => {
    expect(nextPayDate(monthly(31), '2026-04-01')).toBe('2026-04-30');
    expect(nextPayDate(monthly(31), '2026-02-01')).toBe('2026-02-28');
    expect(nextPayDate(monthly(31), '2028-02-01')).toBe('2028-02-29');
    expect(nextPayDate(monthly(30), '2028-02-10')).toBe('2028-02-29');
    expect(nextPayDate(monthly(29), '2027-02-10')).toBe('2027-02-28');
    // A clamped pay date, then the next month's on its own last day.
    expect(nextPayDate(monthly(31), '2026-02-28')).toBe('2026-02-28');
    expect(nextPayDate(monthly(31), '2026-03-01')).toBe('2026-03-31');
    expect(nextPayDate(monthly(30), '2026-03-01')).toBe('2026-03-30');
  });

  it('rolls over the year end', () => {
    expect(nextPayDate(monthly(25), '2026-12-26')).toBe('2027-01-25');
    expect(nextPayDate(monthly(31), '2026-12-31')).toBe('2026-12-31');
    expect(nextPayDate(monthly(1), '2026-12-02')).toBe('2027-01-01');
  });

  it('pays the previous calendar month, or its own month on the month-end schedule (pay day 31)', () => {
    expect(periodFor(monthly(28), '2026-11-28')).toEqual({ start: '2026-10-01', end: '2026-10-31' });
    // Pay day 28 on February's last day still pays January (March 28 pays February).
    expect(periodFor(monthly(28), '2026-02-28')).toEqual({ start: '2026-01-01', end: '2026-01-31' });
    expect(periodFor(monthly(30), '2026-04-30')).toEqual({ start: '2026-03-01', end: '2026-03-31' });
    expect(periodFor(monthly(1), '2026-03-01')).toEqual({ start: '2026-02-01', end: '2026-02-28' });
    expect(periodFor(monthly(1), '2028-03-01')).toEqual({ start: '2028-02-01', end: '2028-02-29' });
    expect(periodFor(monthly(31), '2026-11-30')).toEqual({ start: '2026-11-01', end: '2026-11-30' });
    expect(periodFor(monthly(31), '2028-02-29')).toEqual({ start: '2028-02-01', end: '2028-02-29' });
    expect(periodFor(monthly(15), '2027-01-15')).toEqual({ start: '2026-12-01', end: '2026-12-31' });
    expect(periodFor(monthly(31), '2026-12-31')).toEqual({ start: '2026-12-01', end: '2026-12-31' });
  });
});

describe('semi-monthly', () => {
  it('pays on the 15th and on the last day of the month', () => {
    expect(nextPayDate(semi, '2026-11-01')).toBe('2026-11-15');
    expect(nextPayDate(semi, '2026-11-15')).toBe('2026-11-15');
    expect(nextPayDate(semi, '2026-11-16')).toBe('2026-11-30');
    expect(nextPayDate(semi, '2027-02-16')).toBe('2027-02-28');
    expect(nextPayDate(semi, '2028-02-16')).toBe('2028-02-29');
    expect(nextPayDate(semi, '2026-12-31')).toBe('2026-12-31');
  });

  it('pays the half-month ending on or before the pay date', () => {
    expect(periodFor(semi, '2026-11-15')).toEqual({ start: '2026-11-01', end: '2026-11-15' });
    expect(periodFor(semi, '2026-11-30')).toEqual({ start: '2026-11-16', end: '2026-11-30' });
    expect(periodFor(semi, '2028-02-29')).toEqual({ start: '2028-02-16', end: '2028-02-29' });
    expect(periodFor(semi, '2027-02-28')).toEqual({ start: '2027-02-16', end: '2027-02-28' });
    // Off-schedule days: the latest half-month already over.
    expect(periodFor(semi, '2026-11-20')).toEqual({ start: '2026-11-01', end: '2026-11-15' });
    expect(periodFor(semi, '2027-01-10')).toEqual({ start: '2026-12-16', end: '2026-12-31' });
  });

  it('rolls over the year end', () => {
    expect(nextPayment(semi, '2027-01-01')).toEqual({ payDate: '2027-01-15', period: { start: '2027-01-01', end: '2027-01-15' } });
    expect(nextPayment(semi, '2026-12-20')).toEqual({ payDate: '2026-12-31', period: { start: '2026-12-16', end: '2026-12-31' } });
  });
});

describe('weekly and bi-weekly', () => {
  it('start on the anchor date: nothing is paid before it', () => {
    expect(nextPayDate(weekly('2026-12-04'), '2026-11-01')).toBe('2026-12-04');
    expect(nextPayDate(biweekly('2026-12-04'), '2026-12-04')).toBe('2026-12-04');
  });

  it('repeat every 7 or 14 days from the anchor', () => {
    expect(nextPayDate(weekly('2026-11-06'), '2026-11-07')).toBe('2026-11-13');
    expect(nextPayDate(weekly('2026-11-06'), '2026-11-13')).toBe('2026-11-13');
    expect(nextPayDate(biweekly('2026-11-06'), '2026-11-07')).toBe('2026-11-20');
    expect(nextPayDate(biweekly('2026-11-06'), '2026-11-21')).toBe('2026-12-04');
  });

  it('cross month ends, leap days and year ends on whole days', () => {
    expect(nextPayDate(biweekly('2026-12-25'), '2026-12-26')).toBe('2027-01-08');
    expect(nextPayDate(weekly('2028-02-22'), '2028-02-23')).toBe('2028-02-29');
    expect(nextPayDate(weekly('2028-02-22'), '2028-03-01')).toBe('2028-03-07');
    // Many periods later the cadence has not drifted: 52 weeks after a Friday is a Friday.
    expect(nextPayDate(weekly('2026-11-06'), '2027-11-05')).toBe('2027-11-05');
  });

  it('pay the 7 or 14 days ending on the pay date', () => {
    expect(periodFor(weekly('2026-11-06'), '2026-11-13')).toEqual({ start: '2026-11-07', end: '2026-11-13' });
    expect(periodFor(biweekly('2026-11-06'), '2026-11-20')).toEqual({ start: '2026-11-07', end: '2026-11-20' });
    expect(periodFor(weekly('2027-01-01'), '2027-01-01')).toEqual({ start: '2026-12-26', end: '2027-01-01' });
    expect(periodFor(biweekly('2028-03-06'), '2028-03-06')).toEqual({ start: '2028-02-22', end: '2028-03-06' });
  });
});

describe('consecutive pay dates', () => {
  it('pay periods that meet without gaps or overlaps, for every kind, across two years', () => {
    const schedules = [monthly(31), monthly(30), monthly(29), monthly(28), monthly(1), semi, weekly('2026-01-02'), biweekly('2026-01-02')];
    for (const schedule of schedules) {
      let { payDate, period } = nextPayment(schedule, '2026-01-01');
      while (payDate < '2029-01-01') {
        const next = nextPayment(schedule, dayAfter(payDate));
        expect(next.period.start, `${schedule.frequency} after ${payDate}`).toBe(dayAfter(period.end));
        ({ payDate, period } = next);
      }
    }
  });
});

function dayAfter(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
}
