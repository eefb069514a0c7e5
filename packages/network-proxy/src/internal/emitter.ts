// One typed fan-out for every execd package, defined in @execd/protocol.
export { Emitter } from '@execd/protocol';
