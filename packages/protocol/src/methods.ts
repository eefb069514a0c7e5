import * as v from 'valibot';
import { RpcError } from './errors.ts';
import { describeIssues, serdeMissingField } from './issues.ts';
import { plainOutputBatchParams, plainOutputParams } from './output-params-fast.ts';
import { CapabilityRootsDiscoverParams, CapabilityRootsDiscoverResponse } from './schemas/capability.ts';
import { Empty } from './schemas/common.ts';
import { EnvironmentConfigReadParams, EnvironmentConfigReadResponse } from './schemas/config.ts';
import { EnvironmentInfo, EnvironmentStatus } from './schemas/environment.ts';
import * as fs from './schemas/fs.ts';
import { HttpRequestBodyDeltaNotification, HttpRequestParams, HttpRequestResponse } from './schemas/http.ts';
import { InitializeParams, InitializeResponse } from './schemas/initialize.ts';
import {
  NetworkPolicyDecisionNotification,
  NetworkPolicyRequestParams,
  NetworkPolicyResponse,
} from './schemas/network.ts';
import {
  ExecClosedNotification,
  ExecExitedNotification,
  ExecOutputDeltaNotification,
  ExecParams,
  ExecResponse,
  ExecWaitingForInputNotification,
  ProcessListResponse,
  ProcessOutputBatchNotification,
  ReadParams,
  ReadResponse,
  ResizeParams,
  ResizeResponse,
  SignalParams,
  TerminateParams,
  TerminateResponse,
  WriteParams,
  WriteResponse,
} from './schemas/process.ts';

/** Anything is accepted and ignored (the `initialized` notification's params). */
const Ignored = v.unknown();

/**
 * The one method table both server and client import: method -> params schema, result schema,
 * whether it is a request or a notification, and who sends it. `lane` is the dispatch lane under
 * `--concurrent-requests N` (spec §2.6); `extension` marks execd additions an original peer lacks.
 */
export const METHODS = {
  initialize: { type: 'request', from: 'client', params: InitializeParams, result: InitializeResponse },
  initialized: { type: 'notification', from: 'client', params: Ignored },
  'process/start': {
    type: 'request',
    from: 'client',
    params: ExecParams,
    result: ExecResponse,
    family: 'exec',
  },
  'process/read': {
    type: 'request',
    from: 'client',
    params: ReadParams,
    result: ReadResponse,
    family: 'exec',
  },
  'process/write': {
    type: 'request',
    from: 'client',
    params: WriteParams,
    result: WriteResponse,
    family: 'exec',
  },
  'process/signal': {
    type: 'request',
    from: 'client',
    params: SignalParams,
    result: Empty,
    family: 'exec',
    lane: 'control',
  },
  'process/terminate': {
    type: 'request',
    from: 'client',
    params: TerminateParams,
    result: TerminateResponse,
    family: 'exec',
    lane: 'control',
  },
  'process/resize': {
    type: 'request',
    from: 'client',
    params: ResizeParams,
    result: ResizeResponse,
    family: 'exec',
    lane: 'control',
    extension: true,
  },
  'process/list': {
    type: 'request',
    from: 'client',
    params: Empty,
    result: ProcessListResponse,
    family: 'exec',
    lane: 'control',
    extension: true,
  },
  'environment/info': {
    type: 'request',
    from: 'client',
    params: Empty,
    result: EnvironmentInfo,
    family: 'environment info',
    lane: 'control',
  },
  'environment/status': {
    type: 'request',
    from: 'client',
    params: Empty,
    result: EnvironmentStatus,
    family: 'environment status',
    lane: 'control',
  },
  'environmentConfig/read': {
    type: 'request',
    from: 'client',
    params: EnvironmentConfigReadParams,
    result: EnvironmentConfigReadResponse,
    family: 'environment config',
  },
  'fs/readFile': {
    type: 'request',
    from: 'client',
    params: fs.FsReadFileParams,
    result: fs.FsReadFileResponse,
    family: 'filesystem',
  },
  'fs/writeFile': {
    type: 'request',
    from: 'client',
    params: fs.FsWriteFileParams,
    result: Empty,
    family: 'filesystem',
  },
  'fs/createDirectory': {
    type: 'request',
    from: 'client',
    params: fs.FsCreateDirectoryParams,
    result: Empty,
    family: 'filesystem',
  },
  'fs/getMetadata': {
    type: 'request',
    from: 'client',
    params: fs.FsGetMetadataParams,
    result: fs.FsGetMetadataResponse,
    family: 'filesystem',
  },
  'fs/canonicalize': {
    type: 'request',
    from: 'client',
    params: fs.FsCanonicalizeParams,
    result: fs.FsCanonicalizeResponse,
    family: 'filesystem',
  },
  'fs/readDirectory': {
    type: 'request',
    from: 'client',
    params: fs.FsReadDirectoryParams,
    result: fs.FsReadDirectoryResponse,
    family: 'filesystem',
  },
  'fs/walk': {
    type: 'request',
    from: 'client',
    params: fs.FsWalkParams,
    result: fs.FsWalkResponse,
    family: 'filesystem',
  },
  'fs/remove': {
    type: 'request',
    from: 'client',
    params: fs.FsRemoveParams,
    result: Empty,
    family: 'filesystem',
  },
  'fs/copy': {
    type: 'request',
    from: 'client',
    params: fs.FsCopyParams,
    result: Empty,
    family: 'filesystem',
  },
  'fs/open': {
    type: 'request',
    from: 'client',
    params: fs.FsOpenParams,
    result: fs.FsOpenResponse,
    family: 'filesystem',
  },
  'fs/readBlock': {
    type: 'request',
    from: 'client',
    params: fs.FsReadBlockParams,
    result: fs.FsReadBlockResponse,
    family: 'filesystem',
  },
  'fs/writeBlock': {
    type: 'request',
    from: 'client',
    params: fs.FsWriteBlockParams,
    result: Empty,
    family: 'filesystem',
  },
  'fs/close': {
    type: 'request',
    from: 'client',
    params: fs.FsCloseParams,
    result: Empty,
    family: 'filesystem',
    lane: 'control',
  },
  'fs/watchMissing': {
    type: 'request',
    from: 'client',
    params: fs.FsWatchMissingParams,
    result: fs.FsWatchMissingResponse,
    family: 'filesystem',
  },
  'fs/missingChanged': { type: 'notification', from: 'server', params: fs.FsMissingChangedNotification },
  'capabilityRoots/discoverV1': {
    type: 'request',
    from: 'client',
    params: CapabilityRootsDiscoverParams,
    result: CapabilityRootsDiscoverResponse,
    family: 'capability discovery',
  },
  'http/request': {
    type: 'request',
    from: 'client',
    params: HttpRequestParams,
    result: HttpRequestResponse,
    family: 'http',
  },
  'http/request/bodyDelta': {
    type: 'notification',
    from: 'server',
    params: HttpRequestBodyDeltaNotification,
  },
  'process/output': { type: 'notification', from: 'server', params: ExecOutputDeltaNotification },
  'process/outputBatch': {
    type: 'notification',
    from: 'server',
    params: ProcessOutputBatchNotification,
    extension: true,
  },
  'process/exited': { type: 'notification', from: 'server', params: ExecExitedNotification },
  'process/closed': { type: 'notification', from: 'server', params: ExecClosedNotification },
  'process/waitingForInput': {
    type: 'notification',
    from: 'server',
    params: ExecWaitingForInputNotification,
    extension: true,
  },
  'network/policyRequest': {
    type: 'request',
    from: 'server',
    params: NetworkPolicyRequestParams,
    result: NetworkPolicyResponse,
  },
  'network/policyDecision': {
    type: 'notification',
    from: 'server',
    params: NetworkPolicyDecisionNotification,
  },
} as const;

/** The type of the method table. */
export type MethodTable = typeof METHODS;
/** Every method (requests and notifications, both directions). */
export type MethodName = keyof MethodTable;
/** Requests a client sends to a server. */
export type ClientRequestMethod = {
  [M in MethodName]: MethodTable[M] extends { type: 'request'; from: 'client' } ? M : never;
}[MethodName];
/** Notifications a server sends to a client. */
export type ServerNotificationMethod = {
  [M in MethodName]: MethodTable[M] extends { type: 'notification'; from: 'server' } ? M : never;
}[MethodName];
/** The in-memory params of a method, after validation (defaults filled, bytes as Uint8Array). */
export type ParamsOf<M extends MethodName> = v.InferOutput<MethodTable[M]['params']>;
/** What a caller passes (before defaults and transforms). */
export type ParamsInputOf<M extends MethodName> = v.InferInput<MethodTable[M]['params']>;
/** The in-memory result of a request method, after validation; `never` for notifications. */
export type ResultOf<M extends MethodName> = MethodTable[M] extends {
  result: infer R extends v.GenericSchema;
}
  ? v.InferOutput<R>
  : never;
/** What a server passes as a result (before defaults and transforms). */
export type ResultInputOf<M extends MethodName> = MethodTable[M] extends {
  result: infer R extends v.GenericSchema;
}
  ? v.InferInput<R>
  : never;

/** True when `name` is a method of the table. */
export function isMethodName(name: string): name is MethodName {
  return Object.hasOwn(METHODS, name);
}

/**
 * Validates inbound params once, at the transport boundary. Missing params read as `null`;
 * failures are -32602 with a message naming the method and the field.
 */
export function decodeParams<M extends MethodName>(method: M, raw: unknown): ParamsOf<M> {
  // Output notifications (nearly every frame a client reads) that are exactly what the schema
  // outputs pass as they are: no copy of each chunk's record (see output-params-fast.ts).
  const plain =
    method === 'process/outputBatch'
      ? plainOutputBatchParams(raw)
      : method === 'process/output'
        ? plainOutputParams(raw)
        : undefined;
  if (plain !== undefined) return plain as ParamsOf<M>;
  const schema = METHODS[method].params as v.GenericSchema;
  const parsed = v.safeParse(schema, raw === undefined ? null : raw);
  if (!parsed.success) {
    // A missing field reads exactly as the original's; anything else names the method and fields.
    const message =
      serdeMissingField(parsed.issues) ?? `invalid params for ${method}: ${describeIssues(parsed.issues)}`;
    throw new RpcError('invalidParams', message);
  }
  return parsed.output as ParamsOf<M>;
}

/** Validates a received result (client side). Failures are protocol errors (-32603). */
export function decodeResult<M extends MethodName>(method: M, raw: unknown): ResultOf<M> {
  const entry = METHODS[method] as { result?: v.GenericSchema };
  if (!entry.result) throw new RpcError('internal', `${method} has no result`);
  const parsed = v.safeParse(entry.result, raw);
  if (!parsed.success) {
    throw new RpcError('internal', `invalid result for ${method}: ${describeIssues(parsed.issues)}`);
  }
  return parsed.output as ResultOf<M>;
}
