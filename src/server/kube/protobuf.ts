// Responses in protobuf: Skiff writes none. client-go asks for `application/vnd.kubernetes.protobuf,
// application/json` and gets JSON; a client whose Accept names protobuf alone is refused with 406 before
// anything is done, rather than after a write it could not read the answer of.
import { ApiError, StatusReason } from '../../api/errors.js';
import { isProtobufMediaType, readsProtobuf } from '../../api/protobuf.js';
import type { KindDef } from '../../api/registry.js';
import { apiVersionOf } from '../../api/registry.js';

/** the media types a resource's answers are written in */
const written = ['application/json', 'application/yaml'];

/** true when an Accept header lists media ranges and every one of them is protobuf (q=0 ranges aside) */
export function acceptsOnlyProtobuf(accept: string | undefined): boolean {
  const ranges = (accept ?? '')
    .split(',')
    .map((r) => r.trim())
    .filter((r) => r && !/;\s*q\s*=\s*0(\.0*)?\s*(;|$)/i.test(r));
  return ranges.length > 0 && ranges.every((r) => isProtobufMediaType(r));
}

/**
 * Throws the 406 kube-apiserver answers when it cannot write what the client accepts: for a custom
 * resource its protobuf encoder's refusal; for Kubernetes' own kinds (which kube-apiserver would write
 * as protobuf) the media types Skiff writes instead. Logs and exec stream their own bytes and are not
 * negotiated.
 */
export function refuseProtobufOnlyAccept(accept: string | undefined, def: KindDef, sub?: string): void {
  if (sub === 'log' || sub === 'exec' || !acceptsOnlyProtobuf(accept)) return;
  if (!readsProtobuf(apiVersionOf(def), def.kind)) {
    throw new ApiError(StatusReason.NotAcceptable, 'object *unstructured.Unstructured does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message');
  }
  throw new ApiError(StatusReason.NotAcceptable, `only the following media types are accepted: ${written.join(', ')}`);
}
