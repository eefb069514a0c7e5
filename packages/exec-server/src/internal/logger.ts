// One Logger shape for every execd package, defined in @execd/protocol.
export { type LogFields, type Logger, NOOP_LOGGER } from '@execd/protocol';
