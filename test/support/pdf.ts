/**
 * The text a PDF shows, read back the way a viewer does: parse the file (pdf-lib), decode each
 * page's content streams (FlateDecode), and collect the strings the text operators draw.
 */
import { PDFArray, PDFDocument, PDFRawStream, decodePDFRawStream } from 'pdf-lib';

export async function pdfText(bytes: Uint8Array): Promise<string> {
  const pdf = await PDFDocument.load(bytes);
  const shown: string[] = [];
  for (const page of pdf.getPages()) {
    const contents = page.node.Contents();
    const streams = contents instanceof PDFArray ? contents.asArray().map((ref) => pdf.context.lookup(ref)) : [contents];
    for (const stream of streams) {
      if (!(stream instanceof PDFRawStream)) continue;
      const operators = Buffer.from(decodePDFRawStream(stream).decode()).toString('latin1');
      for (const [, hex, literal] of operators.matchAll(/<([0-9A-Fa-f]*)>\s*Tj|\(((?:\\.|[^\\)])*)\)\s*Tj/g)) {
        shown.push(hex !== undefined ? Buffer.from(hex, 'hex').toString('latin1') : literal!.replace(/\\(.)/g, '$1'));
      }
    }
  }
  return shown.join('\n');
}
