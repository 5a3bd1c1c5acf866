import { useEffect, useState } from 'react';
import { formatUsd } from '../../../lib/money';
import type { DepositInstructions, WalletOption } from '../../../lib/wallet';

const loadWallet = () => import('../../../lib/wallet');

const LABELS: Record<WalletOption['kind'], string> = {
  browser: 'with my browser wallet',
  development: 'with the development wallet',
};

/** A wallet's refusal in a sentence: viem's short message, or the user's own cancel. */
function sendFailure(reason: unknown): string {
  const error = reason as { shortMessage?: string; message?: string; code?: number; cause?: { code?: number } };
  if (error.code === 4001 || error.cause?.code === 4001) return 'You cancelled the transfer in your wallet; nothing was sent.';
  return error.shortMessage ?? error.message?.split('\n')[0] ?? String(reason);
}

/**
 * A cash-out waiting for its deposit: sends exactly the amount from the payout wallet, through a
 * browser wallet or (local mode) the development wallet. One send at a time; the transfer moves
 * on once the provider sees the deposit.
 */
export function SendDeposit({ deposit, onSent }: { deposit: DepositInstructions; onSent: () => void }) {
  const [options, setOptions] = useState<WalletOption[] | null>(null);
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    loadWallet()
      .then((wallet) => wallet.walletOptions(deposit.from_address, deposit.network))
      .then(
        (found) => live && setOptions(found),
        (reason: unknown) => live && setError(reason instanceof Error ? reason.message : String(reason)),
      );
    return () => {
      live = false;
    };
  }, [deposit.from_address, deposit.network]);

  async function send(option: WalletOption) {
    setBusy(true);
    setError(null);
    try {
      const hash = await (await loadWallet()).sendDeposit(option, deposit);
      setSent(hash);
      onSent();
    } catch (reason) {
      setError(sendFailure(reason));
    } finally {
      setBusy(false);
    }
  }

  if (sent) {
    return (
      <span role="status" data-testid="deposit-sent">
        Sent ({sent.slice(0, 10)}…). Your bank is paid once the deposit is confirmed.
      </span>
    );
  }
  return (
    <span className="ap-send-deposit">
      {options?.map((option) => (
        <button key={option.kind} type="button" className="button" disabled={busy} onClick={() => void send(option)}>
          {busy ? 'Sending…' : `Send ${formatUsd(deposit.amount)} ${LABELS[option.kind]}`}
        </button>
      ))}
      {options?.length === 0 && <span className="muted">Open this page in a browser with a wallet holding your payout wallet to send it.</span>}
      {error && (
        <span role="alert" className="field-error">
          {error}
        </span>
      )}
    </span>
  );
}
