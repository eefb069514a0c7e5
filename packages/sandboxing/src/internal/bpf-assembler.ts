// A tiny classic-BPF assembler: enough for seccomp filters (load, and, compare-and-jump, return),
// with named labels so that jump offsets are computed instead of counted by hand.

/** Instruction classes and modes from <linux/filter.h>. */
const BPF_LD_W_ABS = 0x00 | 0x00 | 0x20;
const BPF_ALU_AND_K = 0x04 | 0x50 | 0x00;
const BPF_JMP_JEQ_K = 0x05 | 0x10 | 0x00;
const BPF_JMP_JGE_K = 0x05 | 0x30 | 0x00;
const BPF_JMP_JSET_K = 0x05 | 0x40 | 0x00;
const BPF_RET_K = 0x06 | 0x00;

/** A conditional jump's offsets are one byte each. */
const MAX_JUMP = 255;

/** Size of `struct sock_filter`: u16 code, u8 jt, u8 jf, u32 k. */
export const SOCK_FILTER_BYTES = 8;

/** A jump target: a label, or `next` for the following instruction. */
export type Target = string;

/** Fall through to the next instruction. */
export const NEXT: Target = '';

interface Instruction {
  readonly code: number;
  readonly k: number;
  readonly jt: Target;
  readonly jf: Target;
}

/** Builds a classic-BPF program and encodes it as an array of `struct sock_filter`. */
export class BpfAssembler {
  readonly #code: Instruction[] = [];
  readonly #labels = new Map<string, number>();

  /** Marks the position of the next instruction. */
  label(name: string): this {
    if (this.#labels.has(name)) throw new Error(`duplicate BPF label ${name}`);
    this.#labels.set(name, this.#code.length);
    return this;
  }

  /** A = the 32-bit word at `offset` of the input (`struct seccomp_data`). */
  load(offset: number): this {
    return this.#push(BPF_LD_W_ABS, offset);
  }

  /** A &= k. */
  and(k: number): this {
    return this.#push(BPF_ALU_AND_K, k);
  }

  /** if (A == k) goto jt else goto jf. */
  jumpEqual(k: number, jt: Target, jf: Target = NEXT): this {
    return this.#push(BPF_JMP_JEQ_K, k, jt, jf);
  }

  /** if (A >= k) goto jt else goto jf (unsigned). */
  jumpGreaterOrEqual(k: number, jt: Target, jf: Target = NEXT): this {
    return this.#push(BPF_JMP_JGE_K, k, jt, jf);
  }

  /** if (A & k) goto jt else goto jf. */
  jumpAnySet(k: number, jt: Target, jf: Target = NEXT): this {
    return this.#push(BPF_JMP_JSET_K, k, jt, jf);
  }

  /** return k. */
  ret(k: number): this {
    return this.#push(BPF_RET_K, k);
  }

  /** Number of instructions so far. */
  get length(): number {
    return this.#code.length;
  }

  /** Resolves labels and encodes the program in host byte order, as the kernel reads it. */
  assemble(littleEndian: boolean): Uint8Array {
    const bytes = new Uint8Array(this.#code.length * SOCK_FILTER_BYTES);
    const view = new DataView(bytes.buffer);
    this.#code.forEach((instruction, index) => {
      const at = index * SOCK_FILTER_BYTES;
      view.setUint16(at, instruction.code, littleEndian);
      view.setUint8(at + 2, this.#offset(index, instruction.jt));
      view.setUint8(at + 3, this.#offset(index, instruction.jf));
      view.setUint32(at + 4, instruction.k >>> 0, littleEndian);
    });
    return bytes;
  }

  #offset(index: number, target: Target): number {
    if (target === NEXT) return 0;
    const position = this.#labels.get(target);
    if (position === undefined) throw new Error(`undefined BPF label ${target}`);
    const offset = position - index - 1;
    if (offset < 0 || offset > MAX_JUMP) throw new Error(`BPF jump to ${target} out of range (${offset})`);
    return offset;
  }

  #push(code: number, k: number, jt: Target = NEXT, jf: Target = NEXT): this {
    this.#code.push({ code, k, jt, jf });
    return this;
  }
}
