export {
  embeddedX402Rails,
  liveX402Rails,
  X402_MAX_TIMEOUT_SECONDS,
  type LiveX402Options,
  type X402Match,
  type X402Offer,
  type X402PaymentRequired,
  type X402PayTo,
  type X402Rail,
  type X402Rails,
  type X402Settlement,
} from './rails.js';
export { fromV1Payload, toV1Accepts, v1Network, v2Network, type V1Mapping, type V1Resource } from './v1.js';
export { decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
