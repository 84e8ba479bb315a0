#!/usr/bin/python3
# atimed_apply: applies atime policies to a host's mounts through atimectl,
# all or nothing: every mount is checked first (atimed answers, the mount
# is there and tracked, it has history, /etc/fstab parses and holds it, no
# reader of atime needs more unless forced); only then is fstab written
# (atimectl fstab --write: minimal, verified, atomic) and the live mounts
# changed (atimectl remount). In check mode nothing is run that changes
# anything, and the diff is the one atimectl fstab prints.
# SPDX-License-Identifier: GPL-2.0-or-later
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: atimed_apply
short_description: Apply atime policies to mounts through atimectl
description:
  - Checks every mount of the plan before changing any, then writes the
    policies to fstab with C(atimectl fstab --set --write) and to the live
    mounts with C(atimectl remount).
  - Supports check mode and diff mode; the diff is the one C(atimectl fstab) prints.
  - Fails the host, changing nothing, when atimed does not answer, a mount is
    gone or not tracked, has no history, fstab cannot be parsed or lacks the
    mount, or a reader of atime needs more than the policy gives (unless forced).
  - Mount points are compared as bytes, mountinfo's octal escapes and the
    escaped form atimed gives names in (io.atimed.varlink) are both decoded,
    so a mount point of any name (spaces, backslashes, newlines, bytes that
    are not UTF-8) is found as the kernel has it.
options:
  policies:
    description:
      - Mount point to policy (noatime, relatime, strictatime, optionally with ,nodiratime, ,lazytime or ,nolazytime).
      - A mount point is written as it is (as atimectl takes it on its command line), not escaped.
    type: dict
    default: {}
  follow_advice:
    description: Also apply atimed's advice for mounts not in I(policies) where its confidence is at least this.
    type: str
    choices: [none, high, medium, low]
    default: none
  force:
    description: Mounts whose readers of atime may be overridden (atimectl --force).
    type: list
    elements: str
    default: []
  fstab:
    description: The fstab to edit.
    type: path
    default: /etc/fstab
  min_history_points:
    description: Measured points of history each mount must have (within I(history_since)); 0 checks none.
    type: int
    default: 1
  history_since:
    description: How far back to look for history (an atimectl duration).
    type: str
    default: 1d
  atimectl:
    description: The atimectl to run.
    type: path
    default: /usr/bin/atimectl
author: atimed
"""

RETURN = r"""
mounts:
  description: One entry per mount of the plan.
  type: list
  returned: always
  elements: dict
  contains:
    target:
      description:
        - The mount point, in atimed's form (io.atimed.varlink) - as it is, but
          a backslash doubled and a byte that is not UTF-8 written as a backslash, x and two hex digits.
      type: str
    policy: {description: The policy asked for., type: str}
    source: {description: "Where the policy came from: policies, or advice.", type: str}
    before: {description: The live atime policy before., type: str}
    fstab_change: {description: Whether fstab changes., type: bool}
    remount: {description: Whether the live mount changes., type: bool}
    changed: {description: Whether anything changes for this mount., type: bool}
    refused: {description: Whether a reader of atime refused the policy., type: bool}
    skipped: {description: Whether advice was left alone (its mount is not in fstab)., type: bool}
    why: {description: Why the mount failed, was refused or skipped; empty otherwise., type: str}
problems:
  description: One line for each reason the host failed (empty when it did not).
  type: list
  elements: str
  returned: always
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule

ATIME = ("noatime", "relatime", "strictatime")
CONFIDENCE = {"low": 1, "medium": 2, "high": 3}


def parse_policy(policy):
    """(atime or None, lazytime True/False/None, nodiratime True/None) of a policy string."""
    atime = None
    lazy = None
    nodir = None
    for part in policy.split(","):
        part = part.strip()
        if part in ATIME:
            atime = part
        elif part == "nodiratime":
            nodir = True
        elif part == "lazytime":
            lazy = True
        elif part == "nolazytime":
            lazy = False
        else:
            return None
    if atime is None and lazy is None and nodir is None:
        return None
    return atime, lazy, nodir


# Mount points are bytes, not text: any byte but NUL, chosen by whoever
# mounted (a FUSE mount of a user's, a directory name). They are compared
# here as bytes, each source decoded the one way its format defines:
# mountinfo's octal escapes, and atimed's protocol form (io.atimed.varlink,
# "Names are bytes"), which common/escape.c implements for atimed and
# atimectl. A name from the play (policies, force) is the mount point as
# written, as atimectl takes it on its command line.

HEX = b"0123456789abcdefABCDEF"


def name_decode(name):
    """The bytes a name in atimed's protocol form stands for: a doubled
    backslash is one backslash, a backslash, 'x' and two hex digits (either
    case; not 00) is that byte, and every other character is itself (a lone
    backslash too)."""
    s = name.encode("utf-8", "surrogateescape")
    out = bytearray()
    i = 0
    while i < len(s):
        if s[i:i + 2] == b"\\\\":
            out += b"\\"
            i += 2
        elif s[i:i + 2] == b"\\x" and len(s) >= i + 4 and s[i + 2] in HEX and s[i + 3] in HEX and \
                s[i + 2:i + 4] != b"00":
            out.append(int(s[i + 2:i + 4], 16))
            i += 4
        else:
            out.append(s[i])
            i += 1
    return bytes(out)


def name_encode(raw):
    """A name's protocol form, always valid UTF-8: each byte that is not part
    of valid UTF-8 as \\xHH (lower case), a backslash doubled, the rest as it
    is. Python's strict UTF-8 is RFC 3629's, as atimed's is."""
    text = raw.decode("utf-8", "surrogateescape")
    return "".join("\\x%02x" % (ord(c) - 0xdc00) if "\udc80" <= c <= "\udcff"
                   else "\\\\" if c == "\\" else c for c in text)


def octal_decode(field):
    """A mountinfo field: the kernel writes space, tab, newline and backslash
    as \\ooo; any three octal digits are decoded, as libmount does."""
    out = bytearray()
    i = 0
    while i < len(field):
        code = field[i + 1:i + 4]
        if field[i:i + 1] == b"\\" and len(code) == 3 and all(48 <= c <= 55 for c in code) and int(code, 8) <= 0o377:
            out.append(int(code, 8))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return bytes(out)


def mount_points(mountinfo="/proc/self/mountinfo"):
    """Every mount point of this mount namespace, as bytes."""
    with open(mountinfo, "rb") as f:
        return set(octal_decode(line.split(b" ")[4]) for line in f if len(line.split(b" ")) > 4)


def raw_name(target):
    """The bytes of a mount point written in the play."""
    return target.encode("utf-8", "surrogateescape")


def last_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


class Apply:
    def __init__(self, module):
        self.module = module
        self.p = module.params
        self.ctl = self.p["atimectl"]
        self.force = set(raw_name(t) for t in self.p["force"])

    def run(self, *args):
        # Arguments go as bytes, never through $VAR or ~ expansion: a mount
        # point may hold any of those characters.
        rc, out, err = self.module.run_command([self.ctl] + list(args), expand_user_and_vars=False)
        return rc, out, err

    def json(self, *args):
        rc, out, err = self.run("--json", *args)
        if rc != 0:
            return None, err.strip() or out.strip() or "exit status %d" % rc
        try:
            return json.loads(out), None
        except ValueError as e:
            return None, "no JSON from atimectl: %s" % e

    def plan(self, problems):
        """[(raw target, policy, source)] from policies and, if asked, the advice."""
        plan = [(raw_name(t), str(p), "policies") for t, p in sorted(self.p["policies"].items())]
        want = self.p["follow_advice"]
        if want != "none":
            recs, err = self.json("recommend")
            if err:
                problems.append("the advice cannot be read: %s" % err)
                return plan
            explicit = set(raw for raw, policy, source in plan)
            for r in recs.get("recommendations", []):
                raw = name_decode(r["target"])
                if not r.get("change") or raw in explicit:
                    continue
                if CONFIDENCE.get(r.get("confidence"), 0) >= CONFIDENCE[want]:
                    plan.append((raw, r["recommended"]["options"], "advice"))
        return plan

    def fstab(self, sets, force, write):
        args = ["fstab", "--file", self.p["fstab"]]
        for raw, policy in sets:
            args += ["--set", raw + b"=" + policy.encode()]
        if force:
            args.append("--force")
        if write:
            args.append("--write")
        rc, out, err = self.run("--json", *args)
        try:
            reply = json.loads(out) if out.strip() else None
        except ValueError:
            reply = None
        return rc, reply, err

    def check_fstab(self, entry, raw, policy, source):
        """The guard, and the fstab entry, of one mount: with or without
        --write, a policy below a reader's need is refused."""
        rc, reply, err = self.fstab([(raw, policy)], raw in self.force, False)
        # Readers named on a refusal; with --force they are named too, and
        # overridden.
        readers = [line.replace("atimectl: ", "", 1).strip() for line in err.splitlines()
                   if "breaks a reader of atime" in line] if rc != 0 else []
        not_found = set(name_decode(t) for t in (reply or {}).get("not_found", []))
        if readers:
            entry["refused"] = True
            entry["why"] = "refused: %s" % "; ".join(readers)
        elif raw in not_found and source == "advice":
            # Advice for a mount fstab does not hold (a mount unit's, a
            # container's): left alone, said, not a failure.
            entry["skipped"] = True
            entry["remount"] = False
            entry["why"] = "skipped: not in %s, so the advice would not outlast the mount" % self.p["fstab"]
        elif raw in not_found:
            entry["why"] = "not in %s: the policy would not outlast the mount" % self.p["fstab"]
        elif rc != 0 or reply is None:
            entry["why"] = "fstab: %s" % (last_line(err) or "atimectl fstab failed (exit status %d)" % rc)
        elif [n for n in reply.get("notes", []) if "malformed" in n]:
            entry["why"] = "%s cannot be parsed: %s" % (
                self.p["fstab"], "; ".join(n for n in reply.get("notes", []) if "malformed" in n))
        else:
            entry["fstab_change"] = bool(reply.get("changed"))
            entry["changed"] = entry["fstab_change"] or entry["remount"]

    def check_history(self, entry, raw):
        """Whether the mount has the history asked for; why not in entry."""
        if self.p["min_history_points"] <= 0:
            return True
        hist, err = self.json("history", raw, "--since", self.p["history_since"])
        points = 0 if err else len([pt for pt in hist.get("points", []) if pt.get("atime_updates_per_min") is not None])
        if err or points < self.p["min_history_points"]:
            entry["why"] = "no history: %s" % (err or "%d measured point(s) in the last %s, %d needed" % (
                points, self.p["history_since"], self.p["min_history_points"]))
            return False
        return True

    def check(self, raw, policy, source, tracked, points):
        """One mount of the plan, checked: its entry of the result."""
        entry = dict(target=name_encode(raw), policy=policy, source=source, before="", fstab_change=False,
                     remount=False, changed=False, refused=False, skipped=False, why="")
        parsed = parse_policy(policy)
        if parsed is None:
            entry["why"] = "%r is no policy (noatime, relatime or strictatime, with ,nodiratime, ,lazytime or ,nolazytime)" % policy
            return entry
        if raw not in points:
            entry["why"] = "not mounted: the mount vanished (or never was)"
            return entry
        mount = tracked.get(raw)
        if mount is None:
            entry["why"] = "atimed does not track it (excluded in atimed.conf?): who reads atime there cannot be checked"
            return entry
        entry["before"] = mount["atime"] + (",nodiratime" if mount.get("nodiratime") else "") + \
            (",lazytime" if mount.get("lazytime") else "")
        atime, lazy, nodir = parsed
        entry["remount"] = (atime is not None and atime != mount["atime"]) or \
            (lazy is not None and lazy != bool(mount.get("lazytime"))) or \
            (nodir and atime != "noatime" and not mount.get("nodiratime"))
        if self.check_history(entry, raw):
            self.check_fstab(entry, raw, policy, source)
        return entry

    def apply(self, plan, mounts):
        """Every mount checked: fstab written, then the live mounts changed."""
        todo = [(raw, policy, e) for (raw, policy, source), e in zip(plan, mounts)]
        sets = [(raw, policy) for raw, policy, e in todo if e["fstab_change"]]
        forced = any(raw in self.force for raw, policy, e in todo if e["fstab_change"])
        diff_text = ""
        if sets:
            rc, reply, err = self.fstab(sets, forced, False)
            if rc != 0 or reply is None:
                self.module.fail_json(msg="atimectl fstab: %s" % (last_line(err) or rc), mounts=mounts,
                                      problems=[last_line(err)], changed=False)
            diff_text = reply.get("diff", "")
        for raw, policy, e in todo:
            if e["remount"]:
                diff_text += "remount %s: %s -> %s\n" % (e["target"], e["before"], e["policy"])
        changed = any(e["changed"] for e in mounts)
        result = dict(changed=changed, mounts=mounts, problems=[])
        if self.module._diff and changed:
            result["diff"] = dict(prepared=diff_text)
        if self.module.check_mode or not changed:
            self.module.exit_json(**result)

        if sets:
            rc, reply, err = self.fstab(sets, forced, True)
            if rc != 0 or reply is None or not reply.get("written"):
                self.module.fail_json(msg="atimectl fstab --write: %s" % (last_line(err) or "exit status %d" % rc),
                                      mounts=mounts, problems=[last_line(err)], changed=False)
            result["backup"] = reply.get("backup")
            if os.path.isdir("/run/systemd/system"):
                self.module.run_command(["systemctl", "daemon-reload"], check_rc=True)
        for raw, policy, e in todo:
            if not e["remount"]:
                continue
            args = ["remount", raw, policy] + (["--force"] if raw in self.force else [])
            reply, err = self.json(*args)
            if err:
                self.module.fail_json(msg="atimectl remount %s: %s (fstab was written)" % (e["target"], err),
                                      mounts=mounts, problems=[err], changed=bool(sets))
        self.module.exit_json(**result)

    def main(self):
        problems = []
        status, err = self.json("status")
        if err:
            self.module.fail_json(msg="atimed is not running or does not answer: %s" % err,
                                  mounts=[], problems=["atimed: %s" % err], changed=False)
        tracked = dict((name_decode(m["target"]), m) for m in status.get("mounts", []))
        points = mount_points()
        plan = self.plan(problems)
        mounts = [self.check(raw, policy, source, tracked, points) for raw, policy, source in plan]
        for entry in mounts:
            if entry["why"] and not entry["skipped"]:
                problems.append("%s: %s" % (entry["target"], entry["why"]))
        if problems:
            self.module.fail_json(msg="nothing changed on this host: " + " | ".join(problems),
                                  mounts=mounts, problems=problems, changed=False)
        self.apply(plan, mounts)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            policies=dict(type="dict", default={}),
            follow_advice=dict(type="str", default="none", choices=["none", "high", "medium", "low"]),
            force=dict(type="list", elements="str", default=[]),
            fstab=dict(type="path", default="/etc/fstab"),
            min_history_points=dict(type="int", default=1),
            history_since=dict(type="str", default="1d"),
            atimectl=dict(type="path", default="/usr/bin/atimectl"),
        ),
        supports_check_mode=True,
    )
    Apply(module).main()


if __name__ == "__main__":
    main()
