export {
  BridgeError,
  DESTINATION_TYPES,
  FINAL_TRANSFER_STATUSES,
  type BridgeCard,
  type BridgeCustomer,
  type BridgeErrorKind,
  type BridgeProvider,
  type BridgeTransfer,
  type CardStatus,
  type DestinationType,
  type KycStatus,
  type TransferStatus,
} from './provider.js';
export { BRIDGE_API_BASE_URL, BridgeHttpProvider, type BridgeHttpOptions } from './http.js';
export { SandboxBridge, depositAddressFor, type SandboxBridgeOptions } from './sandbox.js';
export { SEPA_COUNTRIES } from './bank-details.js';
export { validateExternalAccount, type ExternalAccountInput, type ValidatedExternalAccount } from './validation.js';
