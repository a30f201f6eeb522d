#!/usr/bin/env python3
"""Lists the GPU code in a binary's CUDA fat binaries and checks it against
the architectures the build asked for (CMake's CUDA_ARCHITECTURES syntax).

    cuda_fatbin_archs.py FILE [--expect "75-real;80-real;...;90-virtual"]

(the list may be separated by semicolons, commas or spaces).

FILE is a shared library, an executable or a static library (.a). The code
objects are read with `cuobjdump --list-elf/--list-ptx` when cuobjdump is on
PATH (or AVGPOOL_CUOBJDUMP names it), else from the .nv_fatbin sections
directly: a fat binary is a 16-byte header (magic 0xBA55ED50, version,
header size, payload size) and entries, each with a header of its kind
(1: PTX, 2: ELF machine code), header size, payload size and, at byte 28,
the architecture (e.g. 90). Prints one line per kind, e.g.

    elf: sm_75 sm_80 sm_86 sm_89 sm_90
    ptx: compute_90

With --expect, exits 1 unless the sets are exactly those of the list:
"NN-real" gives sm_NN machine code, "NN-virtual" compute_NN PTX, "NN" both.
"""
import os
import re
import shutil
import struct
import subprocess
import sys

FATBIN_MAGIC = 0xBA55ED50


def elf_sections(data, name):
    """The contents of every section called `name` in a 64-bit little-endian ELF."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return []
    e_shoff, = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    if e_shoff == 0 or e_shnum == 0:
        return []
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize) for i in range(e_shnum)]
    strtab_off = headers[e_shstrndx][4]
    out = []
    for sh_name, sh_type, _, _, sh_offset, sh_size, *_ in headers:
        end = data.index(b"\0", strtab_off + sh_name)
        if data[strtab_off + sh_name:end].decode() == name and sh_type != 8:  # 8: SHT_NOBITS
            out.append(data[sh_offset:sh_offset + sh_size])
    return out


def ar_members(data):
    """The members of a System V / GNU ar archive."""
    if not data.startswith(b"!<arch>\n"):
        return [data]
    out, pos = [], 8
    while pos + 60 <= len(data):
        size = int(data[pos + 48:pos + 58].decode().strip())
        out.append(data[pos + 60:pos + 60 + size])
        pos += 60 + size + (size & 1)
    return out


def fatbin_entries(blob):
    """(kind, arch) of every entry of the fat binaries in one .nv_fatbin section."""
    out, pos = set(), 0
    while pos + 16 <= len(blob):
        magic, _, header_size, fat_size = struct.unpack_from("<IHHQ", blob, pos)
        if magic != FATBIN_MAGIC:
            pos += 8  # fat binaries are 8-byte aligned; skip padding
            continue
        entry, end = pos + header_size, pos + header_size + fat_size
        while entry + 32 <= end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", blob, entry)
            arch, = struct.unpack_from("<I", blob, entry + 28)
            if kind == 1:
                out.add(("ptx", "compute_%d" % arch))
            elif kind == 2:
                out.add(("elf", "sm_%d" % arch))
            if entry_header == 0:
                break
            entry += entry_header + payload
        pos = end
    return out


def read_direct(path):
    with open(path, "rb") as f:
        data = f.read()
    found = set()
    for member in ar_members(data):
        for section in elf_sections(member, ".nv_fatbin"):
            found |= fatbin_entries(section)
    return found


def read_cuobjdump(tool, path):
    found = set()
    for kind, flag in (("elf", "--list-elf"), ("ptx", "--list-ptx")):
        r = subprocess.run([tool, flag, path], capture_output=True, text=True)
        # e.g. "ELF file    1: libavgpool.1.sm_75.cubin", "PTX file    1: libavgpool.1.sm_90.ptx"
        for arch in re.findall(r"\.sm_(\d+)[a-z]?\.(?:cubin|ptx)", r.stdout):
            found.add((kind, ("sm_%s" if kind == "elf" else "compute_%s") % arch))
    return found


def expected_set(spec):
    out = set()
    for item in filter(None, re.split(r"[;, ]", spec)):
        m = re.fullmatch(r"(\d+)[a-z]?(-real|-virtual)?", item)
        if not m:
            return None  # native, all, all-major: nothing fixed to compare with
        if m.group(2) != "-virtual":
            out.add(("elf", "sm_" + m.group(1)))
        if m.group(2) != "-real":
            out.add(("ptx", "compute_" + m.group(1)))
    return out


def show(found):
    key = lambda s: int(s.split("_")[1])
    return "\n".join("%s: %s" % (kind, " ".join(sorted((a for k, a in found if k == kind), key=key)) or "-")
                     for kind in ("elf", "ptx"))


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path, expect = args[0], None
    if len(args) >= 3 and args[1] == "--expect":
        expect = args[2]
    tool = os.environ.get("AVGPOOL_CUOBJDUMP") or shutil.which("cuobjdump")
    found = read_cuobjdump(tool, path) if tool else read_direct(path)
    print("%s (read with %s)" % (path, tool or "the fat-binary headers"))
    print(show(found))
    if expect is None:
        return 0 if found else 1
    want = expected_set(expect)
    if want is None:
        print("architectures %s: no fixed list to compare with" % expect)
        return 0 if found else 1
    if found != want:
        print("MISMATCH: CUDA_ARCHITECTURES %s asks for\n%s" % (expect, show(want)))
        return 1
    print("as CUDA_ARCHITECTURES %s asks" % expect)
    return 0


if __name__ == "__main__":
    sys.exit(main())
