/** A payslip as a one-page PDF (pdf-lib: pure JavaScript, the standard Helvetica fonts, no files). */
import { PDFDocument, StandardFonts, rgb, type PDFFont, type PDFPage } from 'pdf-lib';
import { displayUsd } from '../../money.js';
import type { Payslip } from './service.js';

const day = (date: Date | null) => (date ? date.toISOString().slice(0, 10) : '-');

/** The attachment's name: the pay date (or, before it, the day the payment was made) and the run. */
export function payslipFilename(slip: Payslip): string {
  return `payslip-${day(slip.payDate ?? slip.createdAt)}-${slip.runId.slice(0, 8)}.pdf`;
}

function periodText(slip: Payslip): string {
  if (!slip.payPeriod) return '-';
  return `${day(slip.payPeriod.start)} to ${day(slip.payPeriod.end)}`;
}

/** Long hex values (memo, hash) on lines that fit the page. */
const chunks = (text: string, size: number) => text.match(new RegExp(`.{1,${size}}`, 'g')) ?? [text];

export async function payslipPdf(slip: Payslip): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  pdf.setTitle(`Payslip ${slip.employeeName ?? slip.employeeId} ${day(slip.payDate ?? slip.createdAt)}`);
  pdf.setCreationDate(slip.createdAt);
  const page = pdf.addPage([595, 842]); // A4 in points
  const regular = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  let y = 780;
  const line = (text: string, options: { font?: PDFFont; size?: number; x?: number; gap?: number } = {}) => {
    write(page, text, options.x ?? 50, y, options.font ?? regular, options.size ?? 11);
    y -= options.gap ?? 18;
  };
  const row = (label: string, value: string, font = regular) => {
    write(page, label, 50, y, regular, 11);
    write(page, value, 545 - font.widthOfTextAtSize(encodable(font, value), 11), y, font, 11);
    y -= 18;
  };

  line('Payslip', { font: bold, size: 22, gap: 30 });
  line(slip.employerName ?? slip.employerId, { font: bold, size: 13 });
  line(`Employee: ${slip.employeeName ?? slip.employeeId}`);
  line(`Pay period: ${periodText(slip)}`);
  line(`Pay date: ${day(slip.payDate)}`);
  line(`Status: ${slip.status}`, { gap: 30 });

  row('Gross pay', displayUsd(slip.gross));
  row('Deductions (advances)', displayUsd(-slip.advanceDeduction));
  page.drawLine({ start: { x: 50, y: y + 12 }, end: { x: 545, y: y + 12 }, thickness: 0.5, color: rgb(0.6, 0.6, 0.6) });
  y -= 4;
  row('Net pay', displayUsd(slip.net), bold);
  y -= 16;

  line(`Paid to (${slip.chain}): ${slip.walletAddress}`, { size: 9, gap: 14 });
  for (const [label, value] of [['Memo', slip.memo], ['Transaction', slip.txHash]] as const) {
    if (!value) continue;
    chunks(`${label}: ${value}`, 80).forEach((part) => line(part, { size: 9, gap: 14 }));
  }
  if (slip.txUrl) line(slip.txUrl, { size: 9, gap: 14 });
  return pdf.save();
}

const charsets = new WeakMap<PDFFont, Set<number>>();

/** The standard fonts encode WinAnsi only: a character outside it (a name in another script) prints as "?". */
function encodable(font: PDFFont, text: string): string {
  let set = charsets.get(font);
  if (!set) charsets.set(font, (set = new Set(font.getCharacterSet())));
  return [...text].map((ch) => (set.has(ch.codePointAt(0)!) ? ch : '?')).join('');
}

function write(page: PDFPage, text: string, x: number, y: number, font: PDFFont, size: number) {
  page.drawText(encodable(font, text), { x, y, font, size, color: rgb(0.1, 0.1, 0.1) });
}
