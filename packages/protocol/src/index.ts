// @execd/protocol: the wire contract shared by execd servers and clients. No Node APIs.

export { abortedBy, untilAborted } from './abort.ts';
export { decodeBase64, encodeBase64, fromUtf8, isBase64, parseBase64, utf8 } from './bytes.ts';
export { ChangeSignal } from './change-signal.ts';
export {
  type Codec,
  type CodecName,
  createJsonCodec,
  createMsgpackCodec,
  DEFAULT_DECODE_LIMITS,
  type DecodeLimits,
  MAX_FRAME_BYTES,
  MAX_NESTING_DEPTH,
  MAX_VALUES_PER_MESSAGE,
  type OutputFrameWriter,
  sniffCodec,
} from './codec/index.ts';
export { Emitter } from './emitter.ts';
export { classifyMessage, describeIssues, toWireObject } from './envelope.ts';
export {
  ExecError,
  type ExecErrorCode,
  FrameDecodeError,
  OutputGapError,
  RPC_ERROR_NUMBERS,
  RpcError,
  type RpcErrorCode,
  TransportClosedError,
  toExecError,
  toWireError,
  type WireError,
} from './errors.ts';
export { ENVIRONMENT_ID_HEADER } from './http-headers.ts';
export { type LogFields, type Logger, NOOP_LOGGER } from './logger.ts';
export { errorMessage, notificationMessage, requestMessage, responseMessage } from './messages.ts';
export {
  type ClientRequestMethod,
  decodeParams,
  decodeResult,
  isMethodName,
  METHODS,
  type MethodName,
  type MethodTable,
  type ParamsInputOf,
  type ParamsOf,
  type ResultInputOf,
  type ResultOf,
  type ServerNotificationMethod,
} from './methods.ts';
export {
  CapabilityRootDiscoverRequest,
  CapabilityRootDiscovery,
  CapabilityRootsDiscoverParams,
  CapabilityRootsDiscoverResponse,
  CapabilityTextFile,
  DiscoveredPluginFiles,
  DiscoveredSkillFiles,
} from './schemas/capability.ts';
export {
  Bytes,
  Empty,
  Int32,
  opt,
  orNull,
  PathUri,
  ProcessId,
  Seq,
  ShellInfo,
  UInt,
  withDefault,
} from './schemas/common.ts';
export {
  EnvironmentConfigLayer,
  EnvironmentConfigLayerStack,
  EnvironmentConfigReadParams,
  EnvironmentConfigReadResponse,
  TomlPath,
} from './schemas/config.ts';
export {
  ErrorEnvelope,
  NotificationEnvelope,
  RequestEnvelope,
  RequestId,
  ResponseEnvelope,
  type RpcMessage,
} from './schemas/envelope.ts';
export { EnvironmentCapabilities, EnvironmentInfo, EnvironmentStatus } from './schemas/environment.ts';
export {
  FsCanonicalizeParams,
  FsCanonicalizeResponse,
  FsCloseParams,
  FsCopyParams,
  FsCreateDirectoryParams,
  FsGetMetadataParams,
  FsGetMetadataResponse,
  FsMissingChangedNotification,
  FsOpenMode,
  FsOpenParams,
  FsOpenResponse,
  FsReadBlockParams,
  FsReadBlockResponse,
  FsReadDirectoryEntry,
  FsReadDirectoryParams,
  FsReadDirectoryResponse,
  FsReadFileParams,
  FsReadFileResponse,
  FsRemoveParams,
  FsWalkEntry,
  FsWalkError,
  FsWalkOptions,
  FsWalkParams,
  FsWalkResponse,
  FsWatchMissingParams,
  FsWatchMissingResponse,
  FsWriteBlockParams,
  FsWriteFileParams,
} from './schemas/fs.ts';
export {
  HttpHeader,
  HttpRedirectPolicy,
  HttpRequestBodyDeltaNotification,
  HttpRequestParams,
  HttpRequestResponse,
} from './schemas/http.ts';
export { InitializeParams, InitializeResponse } from './schemas/initialize.ts';
export {
  ManagedNetwork,
  NetworkDecision,
  NetworkPolicyDecisionNotification,
  NetworkPolicyRequestParams,
  NetworkPolicyResponse,
  NetworkProxyLaunchConfig,
  NetworkRequest,
  NetworkRequestProtocol,
  RemoteNetworkProxyConfig,
} from './schemas/network.ts';
export {
  FileSystemAccessMode,
  FileSystemPath,
  FileSystemSandboxContext,
  FileSystemSandboxEntry,
  FileSystemSpecialPath,
  ManagedFileSystemPermissions,
  NetworkSandboxPolicy,
  PermissionProfile,
  PolicyContext,
} from './schemas/permission-profile.ts';
export {
  ExecClosedNotification,
  ExecEnvPolicy,
  ExecExitedNotification,
  ExecOutputDeltaNotification,
  ExecParams,
  type ExecParamsInput,
  ExecResponse,
  ExecWaitingForInputNotification,
  OutputStream,
  ProcessListEntry,
  ProcessListResponse,
  ProcessOutputBatchNotification,
  ProcessOutputChunk,
  ProcessSignal,
  ReadParams,
  ReadResponse,
  ResizeParams,
  ResizeResponse,
  ShellSnapshotRequest,
  SignalParams,
  TerminateParams,
  TerminateResponse,
  WriteParams,
  WriteResponse,
  WriteStatus,
} from './schemas/process.ts';
export {
  decodeSandboxParam,
  isFileSystemSandboxContext,
  NetworkMode,
  PermissionProfileName,
  SandboxContext,
  SandboxParam,
  SandboxPreference,
  SandboxType,
} from './schemas/sandbox.ts';
export { readTraceContext, W3cTraceContext } from './trace-context.ts';
export { fileUriToPath, pathToFileUri } from './uri.ts';
