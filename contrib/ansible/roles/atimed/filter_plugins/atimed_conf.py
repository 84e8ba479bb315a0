# atimed_conf: the filters the atimed role's template writes atimed.conf with.
# atimed_conf_path turns a mount point into the escaped form of a
# [mount:PATH] section (atimed.conf(5), "Paths of mounts"), the same form
# atimed --check-config prints: any length, any bytes, read back by atimed
# to exactly those bytes.
# SPDX-License-Identifier: GPL-2.0-or-later
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

# Written as \xHH whatever else: ']' would end the section, '#' and ';'
# start comments; controls (C0, DEL, C1) and the bidirectional controls
# would hide what follows on a terminal.
_ESCAPED = frozenset("]#;")
PATH_MAX = 4096


def _unsafe(ch):
    cp = ord(ch)
    return cp < 0x20 or cp == 0x7F or 0x80 <= cp <= 0x9F or 0x202A <= cp <= 0x202E or 0x2066 <= cp <= 0x2069


def _hex(data):
    return "".join("\\x%02x" % b for b in data)


def _shown(path):
    """The start of a path for a message: the file says where the rest is."""
    r = repr(path)
    return r if len(r) <= 80 else r[:77] + "..."


def atimed_conf_path(path):
    """The mount point 'path' as atimed.conf writes it. A str stands for its
    UTF-8 bytes; a byte that is not UTF-8 is carried as Python does it
    (surrogateescape, as Ansible's facts hold such paths), or pass bytes."""
    if isinstance(path, bytes):
        raw = path
    elif isinstance(path, str):
        try:
            raw = path.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError as e:
            raise AnsibleFilterError("atimed_conf_path: %s is not a path: %s" % (_shown(path), e))
    else:
        raise AnsibleFilterError("atimed_conf_path: expected a path, got %s" % _shown(path))
    if not raw.startswith(b"/") or b"\0" in raw:
        raise AnsibleFilterError("atimed_conf_path: %s is not an absolute path without NUL bytes" % _shown(path))
    if len(raw) >= PATH_MAX:
        raise AnsibleFilterError(
            "atimed_conf_path: %s is %d bytes long; a path has at most %d" % (_shown(path), len(raw), PATH_MAX - 1)
        )
    text = raw.decode("utf-8", "surrogateescape")
    out = []
    for i, ch in enumerate(text):
        if 0xDC80 <= ord(ch) <= 0xDCFF:
            out.append(_hex(ch.encode("utf-8", "surrogateescape")))
        elif ch == "\\":
            out.append("\\\\")
        elif ch in _ESCAPED or _unsafe(ch) or (ch == " " and i == len(text) - 1):
            out.append(_hex(ch.encode("utf-8")))
        else:
            out.append(ch)
    return "".join(out)


class FilterModule(object):
    def filters(self):
        return {"atimed_conf_path": atimed_conf_path}
