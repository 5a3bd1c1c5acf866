import { useId, useState, type ChangeEvent } from 'react';
import { api, type Employee, type Schema } from '../../../lib/api';
import { parseCsv } from './csv';
import { fromUnits, monthlyUnits, normaliseAmountInput, toUnits } from '../../../lib/money';

type AiField = 'email' | 'full_name' | 'wallet_address' | 'annual_salary_usd';
type Field = AiField | 'amount';
type Mapping = Record<Field, string | null>;

type ParseCsvResult = Schema<'AiParseCsvResult'>;

const FIELD_LABELS: Record<Field, string> = {
  email: 'Email column',
  wallet_address: 'Wallet column',
  full_name: 'Name column',
  amount: 'Amount column (USD for this run)',
  annual_salary_usd: 'Annual salary column',
};
const ORDER: Field[] = ['email', 'wallet_address', 'full_name', 'amount', 'annual_salary_usd'];
const AMOUNT_HEADER = /amount|net\s*pay|gross|payment|pay\s*out|^pay$/i;

export interface CsvItem {
  employee_id: string;
  amount: string;
}

interface Resolved {
  items: CsvItem[];
  problems: string[];
}

/** Rows -> items: each row matched to an employee by email, then wallet, then name; its amount from the amount column, else salary / 12, else the employee's monthly salary. */
function resolve(headers: string[], rows: string[][], mapping: Mapping, employees: Employee[]): Resolved {
  const col = (field: Field) => (mapping[field] ? headers.indexOf(mapping[field]!) : -1);
  const byEmail = new Map(employees.map((e) => [e.email.toLowerCase(), e]));
  const byWallet = new Map(employees.filter((e) => e.wallet_address).map((e) => [e.wallet_address!.toLowerCase(), e]));
  const byName = new Map(employees.map((e) => [e.full_name.toLowerCase(), e]));
  const items: CsvItem[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  rows.forEach((row, index) => {
    const line = index + 2; // the header is line 1
    const cell = (field: Field) => {
      const i = col(field);
      return i >= 0 ? (row[i] ?? '').trim() : '';
    };
    const employee =
      (cell('email') && byEmail.get(cell('email').toLowerCase())) ||
      (cell('wallet_address') && byWallet.get(cell('wallet_address').toLowerCase())) ||
      (cell('full_name') && byName.get(cell('full_name').toLowerCase())) ||
      null;
    if (!employee) {
      problems.push(`Line ${line}: no employee matches ${cell('email') || cell('wallet_address') || cell('full_name') || 'this row'}.`);
      return;
    }
    if (seen.has(employee.id)) {
      problems.push(`Line ${line}: ${employee.full_name} appears twice; the first row is used.`);
      return;
    }
    let amount: string | null = null;
    if (cell('amount')) {
      const units = toUnits(normaliseAmountInput(cell('amount')));
      if (units === null || units === 0n) {
        problems.push(`Line ${line}: "${cell('amount')}" is not an amount more than zero.`);
        return;
      }
      amount = fromUnits(units);
    } else if (cell('annual_salary_usd')) {
      const units = toUnits(normaliseAmountInput(cell('annual_salary_usd')));
      if (units === null) {
        problems.push(`Line ${line}: "${cell('annual_salary_usd')}" is not a salary.`);
        return;
      }
      amount = fromUnits(units / 12n);
    } else amount = fromUnits(monthlyUnits(employee.annual_salary_usd));
    seen.add(employee.id);
    items.push({ employee_id: employee.id, amount });
  });
  return { items, problems };
}

/** Step 1's CSV path: read the file, ask POST /api/ai/parse-csv for a column mapping, let the owner correct it, then hand the rows over as items. */
export function CsvImport({ employerId, employees, onApply }: { employerId: string; employees: Employee[]; onApply: (items: CsvItem[]) => void }) {
  const id = useId();
  const [headers, setHeaders] = useState<string[]>([]);
  const [rows, setRows] = useState<string[][]>([]);
  const [mapping, setMapping] = useState<Mapping | null>(null);
  const [suggestion, setSuggestion] = useState<ParseCsvResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const onFile = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    setError(null);
    setMapping(null);
    setSuggestion(null);
    if (!file) return;
    setBusy(true);
    try {
      const parsed = parseCsv(await file.text());
      if (parsed.length < 2) throw new Error('The file needs a header row and at least one data row.');
      const head = parsed[0]!.map((h, i) => h || `Column ${i + 1}`);
      if (new Set(head).size !== head.length) throw new Error('Two columns have the same header; rename one and try again.');
      const data = parsed.slice(1);
      setHeaders(head);
      setRows(data);
      const amountGuess = head.find((h) => AMOUNT_HEADER.test(h) && !/salary|annual/i.test(h)) ?? null;
      try {
        const result = await api<ParseCsvResult>('/api/ai/parse-csv', { method: 'POST', body: { employerId, headers: head, sampleRows: data.slice(0, 20) } });
        setSuggestion(result);
        setMapping({
          email: result.mapping.email ?? null,
          full_name: result.mapping.full_name ?? null,
          wallet_address: result.mapping.wallet_address ?? null,
          // One column cannot be both: a pay column the rules took for a salary is the amount.
          annual_salary_usd: result.mapping.annual_salary_usd && result.mapping.annual_salary_usd !== amountGuess ? result.mapping.annual_salary_usd : null,
          amount: amountGuess,
        });
      } catch (reason) {
        setError(`No mapping suggestions (${(reason as Error).message}); choose the columns yourself.`);
        setMapping({ email: null, full_name: null, wallet_address: null, annual_salary_usd: null, amount: amountGuess });
      }
    } catch (reason) {
      setError((reason as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const resolved = mapping ? resolve(headers, rows, mapping, employees) : null;

  return (
    <div className="stack">
      <label htmlFor={`${id}-file`}>CSV file</label>
      <input id={`${id}-file`} type="file" accept=".csv,text/csv" onChange={(e) => void onFile(e)} aria-describedby={`${id}-hint`} />
      <p id={`${id}-hint`} className="muted core-hint">
        One row per person: an email, wallet or name column to find them, and an amount column (or an annual salary column: one twelfth is paid).
      </p>
      {busy && (
        <p role="status">
          <span className="spinner" aria-hidden="true" /> Reading the file and suggesting a column mapping…
        </p>
      )}
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      {mapping && <MappingFields id={id} headers={headers} mapping={mapping} suggestion={suggestion} onChange={setMapping} />}
      {resolved && (
        <div className="stack" aria-live="polite">
          <p>
            {resolved.items.length} of {rows.length} {rows.length === 1 ? 'row matches' : 'rows match'} an employee.
          </p>
          {resolved.problems.length > 0 && (
            <ul className="core-problems">
              {resolved.problems.slice(0, 20).map((p) => (
                <li key={p}>{p}</li>
              ))}
              {resolved.problems.length > 20 && <li>…and {resolved.problems.length - 20} more.</li>}
            </ul>
          )}
          <div>
            <button type="button" className="button secondary" disabled={resolved.items.length === 0} onClick={() => onApply(resolved.items)}>
              {resolved.items.length === 1 ? 'Use this row' : `Use these ${resolved.items.length} rows`}
            </button>
          </div>
        </div>
      )}
    </div>
  );
}

/** One column picker per field, each showing how sure the suggestion was. */
function MappingFields({ id, headers, mapping, suggestion, onChange }: { id: string; headers: string[]; mapping: Mapping; suggestion: ParseCsvResult | null; onChange: (mapping: Mapping) => void }) {
  return (
    <fieldset className="core-fieldset">
      <legend>Column mapping {suggestion && <span className="muted">(suggested by {suggestion.source === 'model' ? 'the AI model' : 'the rules'}; change any)</span>}</legend>
      <div className="grid core-mapping">
        {ORDER.map((field) => {
          const confidence = field !== 'amount' ? suggestion?.confidence[field] : undefined;
          return (
            <div key={field}>
              <label htmlFor={`${id}-${field}`}>{FIELD_LABELS[field]}</label>
              <select id={`${id}-${field}`} value={mapping[field] ?? ''} onChange={(e) => onChange({ ...mapping, [field]: e.target.value || null })}>
                <option value="">(none)</option>
                {headers.map((h) => (
                  <option key={h} value={h}>
                    {h}
                  </option>
                ))}
              </select>
              {confidence !== undefined && confidence > 0 && <p className="muted core-hint">Suggested with {Math.round(confidence * 100)}% confidence.</p>}
            </div>
          );
        })}
      </div>
      {suggestion && suggestion.unmapped_columns.length > 0 && <p className="muted">Not used: {suggestion.unmapped_columns.join(', ')}.</p>}
    </fieldset>
  );
}
