/**
 * A small assembler for Solana's sBPF (version 0, the one every cluster loads) and the ELF shared
 * object the BPF loader accepts. The escrow program (program.ts) is written with it, so the
 * project builds its on-chain program with nothing but Node (docs/decisions.md, "Escrow custody").
 *
 * Instructions are eBPF's: 8 bytes (opcode, dst and src registers, 16-bit offset, 32-bit
 * immediate); `lddw` takes two slots. Jumps name labels; syscalls are `call -1` with a dynamic
 * relocation naming the syscall, which the loader replaces by the syscall's hash.
 */

export type Register = { readonly register: number };
export const r0: Register = { register: 0 };
export const r1: Register = { register: 1 };
export const r2: Register = { register: 2 };
export const r3: Register = { register: 3 };
export const r4: Register = { register: 4 };
export const r5: Register = { register: 5 };
export const r6: Register = { register: 6 };
export const r7: Register = { register: 7 };
export const r8: Register = { register: 8 };
export const r9: Register = { register: 9 };
/** The frame pointer: the top of this call's 4 KB stack frame (read-only). */
export const r10: Register = { register: 10 };

type Operand = Register | number;
export type Size = 'b' | 'h' | 'w' | 'dw';
export type Condition = 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le' | 'sgt' | 'sge' | 'slt' | 'sle';

const ALU = { add: 0x00, sub: 0x10, mul: 0x20, or: 0x40, and: 0x50, lsh: 0x60, rsh: 0x70, mov: 0xb0 } as const;
const JUMP: Record<Condition, number> = { eq: 0x10, gt: 0x20, ge: 0x30, ne: 0x50, sgt: 0x60, sge: 0x70, lt: 0xa0, le: 0xb0, slt: 0xc0, sle: 0xd0 };
const SIZE: Record<Size, number> = { w: 0x00, h: 0x08, b: 0x10, dw: 0x18 };
const CLASS = { ldx: 0x01, st: 0x02, stx: 0x03, jmp: 0x05, alu64: 0x07 } as const;
const SOURCE_REGISTER = 0x08;

interface Slot {
  opcode: number;
  dst: number;
  src: number;
  offset: number;
  immediate: number;
  /** A jump's target, resolved when the program is assembled. */
  label?: string;
  /** A syscall's name: the loader writes its hash into the immediate. */
  syscall?: string;
}

const isRegister = (operand: Operand): operand is Register => typeof operand === 'object';

export class Assembler {
  private readonly slots: Slot[] = [];
  private readonly labels = new Map<string, number>();

  private emit(slot: Slot): this {
    this.slots.push(slot);
    return this;
  }

  private alu(operation: keyof typeof ALU, dst: Register, src: Operand): this {
    return isRegister(src)
      ? this.emit({ opcode: CLASS.alu64 | ALU[operation] | SOURCE_REGISTER, dst: dst.register, src: src.register, offset: 0, immediate: 0 })
      : this.emit({ opcode: CLASS.alu64 | ALU[operation], dst: dst.register, src: 0, offset: 0, immediate: src });
  }

  mov = (dst: Register, src: Operand) => this.alu('mov', dst, src);
  add = (dst: Register, src: Operand) => this.alu('add', dst, src);
  sub = (dst: Register, src: Operand) => this.alu('sub', dst, src);
  mul = (dst: Register, src: Operand) => this.alu('mul', dst, src);
  and = (dst: Register, src: Operand) => this.alu('and', dst, src);
  or = (dst: Register, src: Operand) => this.alu('or', dst, src);
  lsh = (dst: Register, src: Operand) => this.alu('lsh', dst, src);
  rsh = (dst: Register, src: Operand) => this.alu('rsh', dst, src);

  /** dst = *(size *)(base + offset) */
  ldx(size: Size, dst: Register, base: Register, offset: number): this {
    return this.emit({ opcode: CLASS.ldx | 0x60 | SIZE[size], dst: dst.register, src: base.register, offset, immediate: 0 });
  }

  /** *(size *)(base + offset) = src: a register, or an immediate (sign-extended for `dw`). */
  st(size: Size, base: Register, offset: number, src: Operand): this {
    return isRegister(src)
      ? this.emit({ opcode: CLASS.stx | 0x60 | SIZE[size], dst: base.register, src: src.register, offset, immediate: 0 })
      : this.emit({ opcode: CLASS.st | 0x60 | SIZE[size], dst: base.register, src: 0, offset, immediate: src });
  }

  /** dst = a 64-bit constant (two slots). */
  lddw(dst: Register, value: bigint): this {
    const bits = BigInt.asUintN(64, value);
    this.emit({ opcode: 0x18, dst: dst.register, src: 0, offset: 0, immediate: Number(bits & 0xffffffffn) | 0 });
    return this.emit({ opcode: 0x00, dst: 0, src: 0, offset: 0, immediate: Number(bits >> 32n) | 0 });
  }

  /** if (a <condition> b) goto label */
  jump(condition: Condition, a: Register, b: Operand, label: string): this {
    const opcode = CLASS.jmp | JUMP[condition] | (isRegister(b) ? SOURCE_REGISTER : 0);
    return this.emit({ opcode, dst: a.register, src: isRegister(b) ? b.register : 0, offset: 0, immediate: isRegister(b) ? 0 : b, label });
  }

  goto(label: string): this {
    return this.emit({ opcode: CLASS.jmp, dst: 0, src: 0, offset: 0, immediate: 0, label });
  }

  label(name: string): this {
    if (this.labels.has(name)) throw new Error(`label ${name} defined twice`);
    this.labels.set(name, this.slots.length);
    return this;
  }

  /** Calls a runtime syscall by name (arguments in r1-r5, result in r0; r1-r5 are clobbered). */
  syscall(name: string): this {
    return this.emit({ opcode: 0x85, dst: 0, src: 0, offset: 0, immediate: -1, syscall: name });
  }

  exit(): this {
    return this.emit({ opcode: 0x95, dst: 0, src: 0, offset: 0, immediate: 0 });
  }

  /** The bytecode and, per syscall call, the byte offset of its instruction in the bytecode. */
  assemble(): { text: Buffer; syscalls: { offset: number; name: string }[] } {
    const text = Buffer.alloc(this.slots.length * 8);
    const syscalls: { offset: number; name: string }[] = [];
    this.slots.forEach((slot, pc) => {
      let offset = slot.offset;
      if (slot.label !== undefined) {
        const target = this.labels.get(slot.label);
        if (target === undefined) throw new Error(`undefined label ${slot.label}`);
        offset = target - pc - 1;
        if (offset < -0x8000 || offset > 0x7fff) throw new Error(`jump to ${slot.label} is out of range`);
      }
      if (slot.syscall !== undefined) syscalls.push({ offset: pc * 8, name: slot.syscall });
      text[pc * 8] = slot.opcode;
      text[pc * 8 + 1] = (slot.src << 4) | slot.dst;
      text.writeInt16LE(offset, pc * 8 + 2);
      text.writeInt32LE(slot.immediate, pc * 8 + 4);
    });
    return { text, syscalls };
  }

  /** The program as the shared object `solana program deploy` and LiteSVM's `addProgram` take. */
  toElf(): Uint8Array {
    return sharedObject(this.assemble());
  }
}

// ---- the ELF shared object -------------------------------------------------------------------

const ELF_HEADER_SIZE = 64;
const SECTION_HEADER_SIZE = 64;
const EM_BPF = 247;
const ET_DYN = 3;
const SHT = { progbits: 1, strtab: 3, dynamic: 6, rel: 9, dynsym: 11 } as const;
const SHF_ALLOC = 0x2;
const SHF_EXECINSTR = 0x4;
const DT = { null: 0, symtab: 6, strtab: 5, rel: 17, relsz: 18, relent: 19 } as const;
const R_BPF_64_32 = 10;
const STB_GLOBAL = 1;

const align8 = (n: number) => Math.ceil(n / 8) * 8;

/**
 * The layout the loader reads without program headers (sbpf's lenient parser): `.text` at an
 * address equal to its file offset; `.dynamic` whose DT_REL and DT_SYMTAB point at the addresses
 * of `.rel.dyn` and `.dynsym`; `.dynstr` with the syscall names. Sections are in file order.
 */
function sharedObject({ text, syscalls }: { text: Buffer; syscalls: { offset: number; name: string }[] }): Uint8Array {
  const names = [...new Set(syscalls.map((call) => call.name))];
  const dynstr = Buffer.from(`\0${names.map((name) => `${name}\0`).join('')}`);
  const nameOffset = (name: string) => dynstr.indexOf(Buffer.from(`\0${name}\0`)) + 1;

  const dynsym = Buffer.alloc(24 * (names.length + 1)); // entry 0 is the null symbol
  names.forEach((name, index) => {
    const at = 24 * (index + 1);
    dynsym.writeUInt32LE(nameOffset(name), at);
    dynsym[at + 4] = STB_GLOBAL << 4; // no type, no value: the loader resolves it as a syscall
  });

  const textOffset = ELF_HEADER_SIZE;
  const relOffset = align8(textOffset + text.length);
  const rel = Buffer.alloc(16 * syscalls.length);
  syscalls.forEach((call, index) => {
    rel.writeBigUInt64LE(BigInt(textOffset + call.offset), 16 * index);
    rel.writeBigUInt64LE((BigInt(names.indexOf(call.name) + 1) << 32n) | BigInt(R_BPF_64_32), 16 * index + 8);
  });
  const dynsymOffset = align8(relOffset + rel.length);
  const dynstrOffset = dynsymOffset + dynsym.length;
  const dynamicOffset = align8(dynstrOffset + dynstr.length);
  const dynamic = Buffer.alloc(16 * 6);
  [
    [DT.rel, relOffset],
    [DT.relsz, rel.length],
    [DT.relent, 16],
    [DT.symtab, dynsymOffset],
    [DT.strtab, dynstrOffset],
    [DT.null, 0],
  ].forEach(([tag, value], index) => {
    dynamic.writeBigUInt64LE(BigInt(tag!), 16 * index);
    dynamic.writeBigUInt64LE(BigInt(value!), 16 * index + 8);
  });
  const shstrtab = Buffer.from('\0.text\0.rel.dyn\0.dynsym\0.dynstr\0.dynamic\0.shstrtab\0');
  const shstrtabOffset = dynamicOffset + dynamic.length;
  const sectionsOffset = align8(shstrtabOffset + shstrtab.length);
  const sectionCount = 7;
  const elf = Buffer.alloc(sectionsOffset + sectionCount * SECTION_HEADER_SIZE);

  elf.set([0x7f, 0x45, 0x4c, 0x46, 2 /* 64-bit */, 1 /* little-endian */, 1 /* version */], 0);
  elf.writeUInt16LE(ET_DYN, 16);
  elf.writeUInt16LE(EM_BPF, 18);
  elf.writeUInt32LE(1, 20);
  elf.writeBigUInt64LE(BigInt(textOffset), 24); // the entry point: the first instruction
  elf.writeBigUInt64LE(0n, 32); // no program headers
  elf.writeBigUInt64LE(BigInt(sectionsOffset), 40);
  elf.writeUInt32LE(0, 48); // e_flags 0: sBPF version 0
  elf.writeUInt16LE(ELF_HEADER_SIZE, 52);
  elf.writeUInt16LE(56, 54);
  elf.writeUInt16LE(SECTION_HEADER_SIZE, 58);
  elf.writeUInt16LE(sectionCount, 60);
  elf.writeUInt16LE(sectionCount - 1, 62); // .shstrtab is the last section
  text.copy(elf, textOffset);
  rel.copy(elf, relOffset);
  dynsym.copy(elf, dynsymOffset);
  dynstr.copy(elf, dynstrOffset);
  dynamic.copy(elf, dynamicOffset);
  shstrtab.copy(elf, shstrtabOffset);

  const nameOf = (name: string) => shstrtab.indexOf(Buffer.from(`\0${name}\0`)) + 1;
  const section = (index: number, name: string, type: number, flags: number, offset: number, size: number, options: { address?: number; link?: number; entrySize?: number; info?: number } = {}) => {
    const at = sectionsOffset + index * SECTION_HEADER_SIZE;
    elf.writeUInt32LE(nameOf(name), at);
    elf.writeUInt32LE(type, at + 4);
    elf.writeBigUInt64LE(BigInt(flags), at + 8);
    elf.writeBigUInt64LE(BigInt(options.address ?? 0), at + 16);
    elf.writeBigUInt64LE(BigInt(offset), at + 24);
    elf.writeBigUInt64LE(BigInt(size), at + 32);
    elf.writeUInt32LE(options.link ?? 0, at + 40);
    elf.writeUInt32LE(options.info ?? 0, at + 44);
    elf.writeBigUInt64LE(8n, at + 48);
    elf.writeBigUInt64LE(BigInt(options.entrySize ?? 0), at + 56);
  };
  section(1, '.text', SHT.progbits, SHF_ALLOC | SHF_EXECINSTR, textOffset, text.length, { address: textOffset });
  section(2, '.rel.dyn', SHT.rel, SHF_ALLOC, relOffset, rel.length, { address: relOffset, link: 3, entrySize: 16 });
  section(3, '.dynsym', SHT.dynsym, SHF_ALLOC, dynsymOffset, dynsym.length, { address: dynsymOffset, link: 4, entrySize: 24, info: 1 });
  section(4, '.dynstr', SHT.strtab, SHF_ALLOC, dynstrOffset, dynstr.length, { address: dynstrOffset });
  section(5, '.dynamic', SHT.dynamic, SHF_ALLOC, dynamicOffset, dynamic.length, { address: dynamicOffset, link: 4, entrySize: 16 });
  section(6, '.shstrtab', SHT.strtab, 0, shstrtabOffset, shstrtab.length);
  return elf;
}
