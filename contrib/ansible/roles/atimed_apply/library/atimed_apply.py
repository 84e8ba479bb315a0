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
options:
  policies:
    description: Mount point to policy (noatime, relatime, strictatime, optionally with ,nodiratime, ,lazytime or ,nolazytime).
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
    target: {description: The mount point., type: str}
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


def mounted(target):
    """Whether target is a mount point in this mount namespace."""
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
        for line in f:
            fields = line.split()
            if len(fields) > 4:
                point = fields[4].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
                if point == target:
                    return True
    return False


def last_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


class Apply:
    def __init__(self, module):
        self.module = module
        self.p = module.params
        self.ctl = self.p["atimectl"]

    def run(self, *args):
        rc, out, err = self.module.run_command([self.ctl] + list(args))
        return rc, out, err

    def json(self, *args):
        rc, out, err = self.run("--json", *args)
        if rc != 0:
            return None, err.strip() or out.strip() or "exit status %d" % rc
        try:
            return json.loads(out), None
        except ValueError as e:
            return None, "no JSON from atimectl %s: %s" % (" ".join(args), e)

    def plan(self, problems):
        """[(target, policy, source)] from policies and, if asked, the advice."""
        plan = [(t, str(p), "policies") for t, p in sorted(self.p["policies"].items())]
        want = self.p["follow_advice"]
        if want != "none":
            recs, err = self.json("recommend")
            if err:
                problems.append("the advice cannot be read: %s" % err)
                return plan
            explicit = set(self.p["policies"])
            for r in recs.get("recommendations", []):
                if not r.get("change") or r["target"] in explicit:
                    continue
                if CONFIDENCE.get(r.get("confidence"), 0) >= CONFIDENCE[want]:
                    plan.append((r["target"], r["recommended"]["options"], "advice"))
        return plan

    def fstab(self, sets, force, write):
        args = ["fstab", "--file", self.p["fstab"]]
        for target, policy in sets:
            args += ["--set", "%s=%s" % (target, policy)]
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

    def main(self):
        problems = []
        status, err = self.json("status")
        if err:
            self.module.fail_json(msg="atimed is not running or does not answer: %s" % err,
                                  mounts=[], problems=["atimed: %s" % err], changed=False)
        tracked = {m["target"]: m for m in status.get("mounts", [])}
        plan = self.plan(problems)
        force = set(self.p["force"])
        mounts = []
        for target, policy, source in plan:
            entry = dict(target=target, policy=policy, source=source, before="", fstab_change=False,
                         remount=False, changed=False, refused=False, skipped=False, why="")
            mounts.append(entry)
            parsed = parse_policy(policy)
            if parsed is None:
                entry["why"] = "%r is no policy (noatime, relatime or strictatime, with ,nodiratime, ,lazytime or ,nolazytime)" % policy
                continue
            if not mounted(target):
                entry["why"] = "not mounted: the mount vanished (or never was)"
                continue
            mount = tracked.get(target)
            if mount is None:
                entry["why"] = "atimed does not track it (excluded in atimed.conf?): who reads atime there cannot be checked"
                continue
            entry["before"] = mount["atime"] + (",nodiratime" if mount.get("nodiratime") else "") + \
                (",lazytime" if mount.get("lazytime") else "")
            atime, lazy, nodir = parsed
            entry["remount"] = (atime is not None and atime != mount["atime"]) or \
                (lazy is not None and lazy != bool(mount.get("lazytime"))) or \
                (nodir and atime != "noatime" and not mount.get("nodiratime"))
            if self.p["min_history_points"] > 0:
                hist, err = self.json("history", target, "--since", self.p["history_since"])
                points = 0 if err else len([pt for pt in hist.get("points", [])
                                            if pt.get("atime_updates_per_min") is not None])
                if err or points < self.p["min_history_points"]:
                    entry["why"] = "no history: %s" % (err or "%d measured point(s) in the last %s, %d needed" % (
                        points, self.p["history_since"], self.p["min_history_points"]))
                    continue
            # The guard, and the fstab entry, mount by mount: with or
            # without --write, a policy below a reader's need is refused.
            rc, reply, err = self.fstab([(target, policy)], target in force, False)
            if rc != 0 or reply is None:
                why = last_line(err) or "atimectl fstab failed (exit status %d)" % rc
                readers = [line.replace("atimectl: ", "", 1).strip() for line in err.splitlines()
                           if "breaks a reader of atime" in line]
                if readers:
                    entry["refused"] = True
                    entry["why"] = "refused: %s" % "; ".join(readers)
                elif source == "advice" and ("%s is not in %s" % (target, self.p["fstab"])) in err:
                    # Advice for a mount fstab does not hold (a mount unit's,
                    # a container's): left alone, said, not a failure.
                    entry["skipped"] = True
                    entry["remount"] = False
                    entry["why"] = "skipped: not in %s, so the advice would not outlast the mount" % self.p["fstab"]
                else:
                    entry["why"] = "fstab: %s" % why
                continue
            malformed = [n for n in reply.get("notes", []) if "malformed" in n]
            if malformed:
                entry["why"] = "%s cannot be parsed: %s" % (self.p["fstab"], "; ".join(malformed))
                continue
            if target in reply.get("not_found", []):
                entry["why"] = "not in %s: the policy would not outlast the mount" % self.p["fstab"]
                continue
            entry["fstab_change"] = bool(reply.get("changed"))
            entry["changed"] = entry["fstab_change"] or entry["remount"]

        for entry in mounts:
            if entry["why"] and not entry["skipped"]:
                problems.append("%s: %s" % (entry["target"], entry["why"]))
        if problems:
            self.module.fail_json(msg="nothing changed on this host: " + " | ".join(problems),
                                  mounts=mounts, problems=problems, changed=False)

        sets = [(e["target"], e["policy"]) for e in mounts if e["fstab_change"]]
        forced = any(e["target"] in force for e in mounts if e["fstab_change"])
        diff_text = ""
        if sets:
            rc, reply, err = self.fstab(sets, forced, False)
            if rc != 0 or reply is None:
                self.module.fail_json(msg="atimectl fstab: %s" % (last_line(err) or rc), mounts=mounts,
                                      problems=[last_line(err)], changed=False)
            diff_text = reply.get("diff", "")
        for e in mounts:
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
        for e in mounts:
            if not e["remount"]:
                continue
            args = ["remount", e["target"], e["policy"]] + (["--force"] if e["target"] in force else [])
            reply, err = self.json(*args)
            if err:
                self.module.fail_json(msg="atimectl remount %s: %s (fstab was written)" % (e["target"], err),
                                      mounts=mounts, problems=[err], changed=bool(sets))
        self.module.exit_json(**result)


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
