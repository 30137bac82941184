"""The pinned Debian packages of ``configs/system-packages.txt``: read, fetch by SHA-256, or listed for apt-get.

A pinned line is ``name=version sha256=<hex> <path in the Debian archive>``; a line of a bare name is a host-only
package (a compiler for an optional extra). The image installs the pinned packages from their ``.deb`` files,
fetched by path from a Debian mirror and checked against the pinned digest before ``dpkg -i`` sees them, so that an
image on any base (Ubuntu's CUDA image or Debian) and a host run on Debian record the same package versions. The
host installs the same ``name=version`` with apt-get (``noxfile.py``). Standard library only: it runs on the base
image's Python before anything is installed.

    python3 containers/debs.py fetch configs/system-packages.txt DEST [--mirror URL]   # download and verify
    python3 containers/debs.py apt configs/system-packages.txt                         # name=version per line
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

# Tried in order; a version that has left the first (a point release superseded it) stays in the second.
MIRRORS = ("http://deb.debian.org/debian", "http://archive.debian.org/debian")
PIN = re.compile(
    r"(?P<name>[a-z0-9][a-z0-9+.-]+)=(?P<version>\S+) sha256=(?P<sha256>[0-9a-f]{64}) (?P<path>pool/\S+\.deb)"
)
NAME = re.compile(r"[a-z0-9][a-z0-9+.-]+")


class PinError(ValueError):
    """A line of the package list that is neither a pin nor a bare name, or a .deb that is not the pinned one."""


@dataclass(frozen=True)
class Package:
    name: str
    version: str | None  # None: a host-only package, not pinned
    sha256: str | None = None
    path: str | None = None

    @property
    def apt(self) -> str:
        """The package as apt-get install takes it (``name=version`` when pinned)."""
        return self.name if self.version is None else f"{self.name}={self.version}"


def read_packages(text: str, source: str = "system-packages.txt") -> list[Package]:
    """Every package of the list, in order; a malformed line is a PinError naming the line."""
    packages = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if pin := PIN.fullmatch(line):
            path = PurePosixPath(pin["path"])
            if ".." in path.parts:
                raise PinError(f"{source}:{number}: the archive path {pin['path']!r} leaves the pool")
            packages.append(Package(pin["name"], pin["version"], pin["sha256"], pin["path"]))
        elif NAME.fullmatch(line):
            packages.append(Package(line, None))
        else:
            raise PinError(f"{source}:{number}: expected 'name=version sha256=<hex> pool/...deb' or a package name")
    return packages


def fetch(package: Package, dest: Path, mirrors: tuple[str, ...] = MIRRORS) -> Path:
    """The pinned .deb of ``package`` in ``dest``, downloaded from the first mirror that has it and checked
    against the pinned SHA-256 (a file of other bytes is never written)."""
    assert package.path is not None and package.sha256 is not None
    problems = []
    for mirror in mirrors:
        url = f"{mirror.rstrip('/')}/{package.path}"
        try:
            with urllib.request.urlopen(url, timeout=120) as response:
                data = response.read()
        except (urllib.error.URLError, OSError) as error:
            problems.append(f"{url}: {error}")
            continue
        digest = hashlib.sha256(data).hexdigest()
        if digest != package.sha256:
            raise PinError(f"{url}: SHA-256 {digest}, the pin is {package.sha256}")
        target = dest / PurePosixPath(package.path).name
        target.write_bytes(data)
        return target
    raise PinError(f"{package.apt}: not found on any mirror ({'; '.join(problems)})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["fetch", "apt"])
    parser.add_argument("packages", type=Path, help="configs/system-packages.txt")
    parser.add_argument("dest", type=Path, nargs="?", help="folder for the .deb files (fetch)")
    parser.add_argument("--mirror", action="append", help="Debian mirror to try first (repeatable)")
    options = parser.parse_args(argv)
    try:
        packages = read_packages(options.packages.read_text(encoding="utf-8"), str(options.packages))
        if options.command == "apt":
            print("\n".join(package.apt for package in packages))
            return 0
        if options.dest is None:
            parser.error("fetch needs DEST")
        options.dest.mkdir(parents=True, exist_ok=True)
        mirrors = (*(options.mirror or ()), *MIRRORS)
        for package in packages:
            if package.version is not None:
                print(f"debs: {package.apt} -> {fetch(package, options.dest, mirrors).name}", flush=True)
    except (OSError, PinError) as error:
        print(f"debs: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
