#!/usr/bin/env python3
"""Extract pinned members of a wheel (a zip file) and check their sha256.

Usage: setup_extract.py WHEEL MEMBER DEST SHA256 [MEMBER DEST SHA256 ...]

Each member is streamed to DEST.tmp while its sha256 is computed; a matching file is
fsynced and moved over DEST with os.replace, so DEST is either absent, the old file or
the complete new one. A mismatch removes DEST.tmp and leaves DEST untouched.
Standard library only (the base image has no unzip). Called by scripts/setup.

Exit codes: 0 all extracted, 2 sha256 mismatch, 3 disk full, 4 bad wheel or missing member,
1 any other error.
"""

import errno
import hashlib
import os
import sys
import zipfile

CHUNK = 1 << 20


def fail(code: int, message: str) -> "None":
    print(f"scripts/setup: {message}", file=sys.stderr)
    sys.exit(code)


def extract(wheel: zipfile.ZipFile, wheel_path: str, member: str, dest: str, want: str) -> None:
    try:
        info = wheel.getinfo(member)
    except KeyError:
        fail(4, f"{os.path.basename(wheel_path)} has no member {member}")
    os.makedirs(os.path.dirname(dest) or ".", exist_ok=True)
    tmp = dest + ".tmp"
    digest = hashlib.sha256()
    try:
        with wheel.open(info) as src, open(tmp, "wb") as out:
            while True:
                chunk = src.read(CHUNK)
                if not chunk:
                    break
                digest.update(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    got = digest.hexdigest()
    if got != want:
        os.unlink(tmp)
        fail(
            2,
            f"sha256 mismatch for {dest} (member {member} of {os.path.basename(wheel_path)})\n"
            f"  expected {want}\n  actual   {got}\n  the file was not installed",
        )
    os.chmod(tmp, 0o644)
    os.replace(tmp, dest)
    print(f"  {dest}", file=sys.stderr)


def main(argv: list) -> None:
    if len(argv) < 4 or (len(argv) - 1) % 3 != 0:
        fail(1, "usage: setup_extract.py WHEEL MEMBER DEST SHA256 [MEMBER DEST SHA256 ...]")
    wheel_path = argv[0]
    triples = [argv[i : i + 3] for i in range(1, len(argv), 3)]
    try:
        with zipfile.ZipFile(wheel_path) as wheel:
            for member, dest, want in triples:
                extract(wheel, wheel_path, member, dest, want.lower())
    except zipfile.BadZipFile as e:
        fail(4, f"{wheel_path} is not a valid wheel: {e}")
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.EDQUOT):
            fail(3, f"disk full while extracting from {os.path.basename(wheel_path)}: {e}")
        fail(1, f"extracting from {os.path.basename(wheel_path)} failed: {e}")


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except KeyboardInterrupt:
        sys.exit(130)
