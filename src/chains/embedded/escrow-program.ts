import { createHash } from 'node:crypto';
import { getBase58Decoder, type Address } from '@solana/kit';

/**
 * Local mode's escrow program: the on-chain home of `submit_deliverable` (spec 4.4 deliver-signed).
 * Custody stays in the vault account the service moves (docs/decisions.md); what the chain enforces
 * here is the worker's part: the instruction lands only when its first account signed the
 * transaction. The instruction's data (escrow id and uri_hash) is checked by the service before
 * broadcast and stays on chain with the transaction.
 *
 * LiteSVM runs real sBPF, so the program is a real one: eight instructions in a minimal ELF that the
 * BPF loader accepts (ELF64, EM_BPF, ET_DYN, one .text section; no relocations, no data).
 */
export const LOCAL_ESCROW_PROGRAM_ID = getBase58Decoder().decode(
  createHash('sha256').update('svc local escrow program v1').digest(),
) as Address;

// The loader's input region (r1): u64 account count, then per account a duplicate marker (0xff
// when unique) and is_signer at byte 9.
const PROGRAM = [
  insn(0x79, 2, 1, 0, 0), // ldxdw r2, [r1+0]      account count
  insn(0x15, 2, 0, 4, 0), // jeq   r2, 0, +4        none: fail
  insn(0x71, 3, 1, 9, 0), // ldxb  r3, [r1+9]      first account's is_signer
  insn(0x15, 3, 0, 2, 0), // jeq   r3, 0, +2        unsigned: fail
  insn(0xb7, 0, 0, 0, 0), // mov64 r0, 0
  insn(0x95, 0, 0, 0, 0), // exit                    success
  insn(0xb7, 0, 0, 0, 1), // mov64 r0, 1
  insn(0x95, 0, 0, 0, 0), // exit                    Custom(1)
];

/** One sBPF instruction: opcode, dst and src registers, 16-bit offset, 32-bit immediate. */
function insn(opcode: number, dst: number, src: number, offset: number, immediate: number): Buffer {
  const bytes = Buffer.alloc(8);
  bytes[0] = opcode;
  bytes[1] = (src << 4) | dst;
  bytes.writeInt16LE(offset, 2);
  bytes.writeInt32LE(immediate, 4);
  return bytes;
}

const ELF_HEADER_SIZE = 64;
const SECTION_HEADER_SIZE = 64;
const EM_BPF = 247;
const ET_DYN = 3;
const SHT_PROGBITS = 1;
const SHT_STRTAB = 3;
const SHF_ALLOC_EXECINSTR = 0x6;

/** The program as an ELF shared object: header, .text, .shstrtab, then the three section headers. */
export function escrowProgramElf(): Uint8Array {
  const text = Buffer.concat(PROGRAM);
  const names = Buffer.from('\0.text\0.shstrtab\0');
  const textOffset = ELF_HEADER_SIZE;
  const namesOffset = textOffset + text.length;
  const sectionsOffset = Math.ceil((namesOffset + names.length) / 8) * 8;
  const elf = Buffer.alloc(sectionsOffset + 3 * SECTION_HEADER_SIZE);

  elf.set([0x7f, 0x45, 0x4c, 0x46, 2 /* 64-bit */, 1 /* little-endian */, 1 /* version */], 0);
  elf.writeUInt16LE(ET_DYN, 16);
  elf.writeUInt16LE(EM_BPF, 18);
  elf.writeUInt32LE(1, 20);
  elf.writeBigUInt64LE(BigInt(textOffset), 24); // entry point: the start of .text
  elf.writeBigUInt64LE(0n, 32); // no program headers
  elf.writeBigUInt64LE(BigInt(sectionsOffset), 40);
  elf.writeUInt16LE(ELF_HEADER_SIZE, 52);
  elf.writeUInt16LE(56, 54); // program header entry size (none present)
  elf.writeUInt16LE(SECTION_HEADER_SIZE, 58);
  elf.writeUInt16LE(3, 60);
  elf.writeUInt16LE(2, 62); // .shstrtab's index
  text.copy(elf, textOffset);
  names.copy(elf, namesOffset);

  const section = (index: number, name: number, type: number, flags: number, address: number, offset: number, size: number, align: number) => {
    const at = sectionsOffset + index * SECTION_HEADER_SIZE;
    elf.writeUInt32LE(name, at);
    elf.writeUInt32LE(type, at + 4);
    elf.writeBigUInt64LE(BigInt(flags), at + 8);
    elf.writeBigUInt64LE(BigInt(address), at + 16);
    elf.writeBigUInt64LE(BigInt(offset), at + 24);
    elf.writeBigUInt64LE(BigInt(size), at + 32);
    elf.writeBigUInt64LE(BigInt(align), at + 48);
  };
  // Index 0 stays the null section. The loader wants .text at an address equal to its file offset.
  section(1, 1, SHT_PROGBITS, SHF_ALLOC_EXECINSTR, textOffset, textOffset, text.length, 8);
  section(2, 7, SHT_STRTAB, 0, 0, namesOffset, names.length, 1);
  return elf;
}
