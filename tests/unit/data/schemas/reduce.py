#!/usr/bin/env python3
"""
Reduces the real ECS and OCSF schemas to what check_export validates
against: read from git mirrors at a tag (git show), written as JSON here.
Trusts the two upstream repositories; run by hand, never by the tests.

  reduce.py ECS_GITDIR ECS_TAG OCSF_GITDIR OCSF_TAG [OUTDIR]
"""
import json
import subprocess
import sys

import yaml

# ECS field sets our export writes or should write; every field of each.
ECS_SETS = ["@timestamp", "message", "ecs", "event", "process", "source",
            "destination", "client", "network", "dns", "user", "group",
            "host", "observer", "rule", "container", "related", "labels",
            "tags", "file", "url", "service", "user_agent", "trace",
            "span", "http"]
ECS_KEEP = ("type", "allowed_values", "normalize", "required")

# OCSF classes per event we emit (category/class file names).
OCSF_CLASSES = ["base_event", "system/process_activity", "findings/detection_finding",
                "system/file_activity", "network/network_activity",
                "network/dns_activity", "network/http_activity",
                "iam/authentication", "application/application_lifecycle",
                "application/api_activity",
                "discovery/device_config_state_change"]
# Objects the validator descends into; it fails on any other object.
OCSF_OBJECTS = ["metadata", "product", "feature", "actor", "user", "session",
                "process", "file", "fingerprint", "network_endpoint",
                "endpoint", "network_connection_info", "firewall_rule", "dns_query",
                "finding_info", "evidences", "device", "api", "service",
                "request", "response", "policy", "auth_factor", "group",
                "agent", "container", "image", "http_request", "network_traffic",
                "http_response", "url",
                "analytic", "enrichment", "observable"]
BASE_TYPES = {"string_t": "string", "integer_t": "integer",
              "long_t": "integer", "float_t": "number",
              "boolean_t": "boolean", "json_t": "any"}


def show(gitdir, tag, path):
    return subprocess.run(["git", "--git-dir", gitdir, "show",
                           f"{tag}:{path}"], check=True,
                          capture_output=True).stdout


def ls(gitdir, tag, under):
    out = subprocess.run(["git", "--git-dir", gitdir, "ls-tree", "-r",
                          "--name-only", tag, under], check=True,
                         capture_output=True, text=True).stdout
    return out.split()


def commit(gitdir, tag):
    return subprocess.run(["git", "--git-dir", gitdir, "rev-parse",
                           f"{tag}^{{commit}}"], check=True,
                          capture_output=True, text=True).stdout.strip()


def ecs(gitdir, tag):
    flat = yaml.safe_load(show(gitdir, tag, "generated/ecs/ecs_flat.yml"))
    fields = {}
    for name, f in sorted(flat.items()):
        if name.split(".")[0] not in ECS_SETS:
            continue
        r = {k: f[k] for k in ECS_KEEP if k in f and f[k]}
        if "allowed_values" in r:
            exp = {v["name"]: v["expected_event_types"]
                   for v in r["allowed_values"]
                   if v.get("expected_event_types")}
            if exp:
                r["expected_event_types"] = exp
            r["allowed_values"] = [v["name"] for v in r["allowed_values"]]
        fields[name] = r
    version = show(gitdir, tag, "version").decode().strip()
    return version, {"schema": "ECS", "version": version,
                     "source": {"repo": "github:elastic/ecs", "tag": tag,
                                "commit": commit(gitdir, tag),
                                "file": "generated/ecs/ecs_flat.yml"},
                     "field_sets": ECS_SETS, "fields": fields}


class Ocsf:
    def __init__(self, gitdir, tag):
        self.g, self.t = gitdir, tag
        self.dic = self.load("dictionary.json")
        self.types = self.dic["types"]["attributes"]
        self.cats = self.load("categories.json")["attributes"]
        self.objs = {}
        for p in ls(gitdir, tag, "objects/"):
            o = self.load(p)
            self.objs[o["name"]] = o
        self.events = {}
        for p in ls(gitdir, tag, "events/"):
            e = self.load(p)
            self.events[e["name"]] = e

    def load(self, path):
        return json.loads(show(self.g, self.t, path))

    def base_type(self, t):
        while t not in BASE_TYPES:
            t = self.types[t]["type"]
        return BASE_TYPES[t]

    def constraints(self, node, pool):
        while node.get("constraints") is None and node.get("extends"):
            node = pool[node["extends"]]
        return node.get("constraints", {})

    def attrs(self, node, pool):
        """Attributes of node, its parents and includes, merged."""
        out = {}
        if node.get("extends"):
            out = self.attrs(pool[node["extends"]], pool)
        a = dict(node.get("attributes", {}))
        for inc in a.pop("$include", []):
            f = self.load(inc)
            prof = f["name"] if inc.startswith("profiles/") else None
            for k, v in f.get("attributes", {}).items():
                out[k] = merge(out.get(k, {}), {**v, "profile": prof}
                               if prof else v)
        for k, v in a.items():
            out[k] = merge(out.get(k, {}), v)
        return out

    def resolve(self, attrs):
        res = {}
        for name, a in sorted(attrs.items()):
            d = merge(self.dic["attributes"].get(name, {}), a)
            t = d["type"]
            r = {"requirement": d.get("requirement", "optional")}
            if t == "object_t":
                r["type"] = "object:" + d.get("object_type", "object")
            elif t in self.objs:
                r["type"] = "object:" + t
            else:
                r["type"] = self.base_type(t)
                if t not in BASE_TYPES:
                    r["format"] = t
                rng = self.types.get(t, {}).get("range")
                if rng:
                    r["range"] = rng
            if d.get("is_array"):
                r["array"] = True
            if d.get("enum"):
                r["enum"] = sorted(int(k) if r["type"] == "integer" else k
                                   for k in d["enum"])
            if d.get("profile"):
                r["profile"] = d["profile"]
            if d.get("sibling"):
                r["sibling"] = d["sibling"]
            res[name] = r
        return res

    def cls(self, path):
        e = self.load(f"events/{path}.json")
        node = e
        while node.get("category") is None:
            node = self.events[node["extends"]]
        cat = self.cats.get(node["category"])
        # The Base Event is "other": category 0, class 0.
        cuid = cat["uid"] if cat else 0
        uid = cuid * 1000 + e.get("uid", 0)
        attrs = self.resolve(self.attrs(e, self.events))
        # As the OCSF server compiles them: the class's own uids only.
        attrs["class_uid"]["enum"] = [uid]
        attrs["category_uid"]["enum"] = [cuid]
        attrs["type_uid"]["enum"] = [uid * 100 + a for a in
                                     attrs["activity_id"]["enum"]]
        return {"name": e["caption"],
                "class_uid": uid,
                "category_uid": cuid, "category_name":
                cat["caption"] if cat else "Uncategorized",
                "file": f"events/{path}.json",
                "constraints": self.constraints(e, self.events),
                "attributes": attrs}

    def obj(self, name):
        return {"name": self.objs[name]["caption"], "constraints":
                self.constraints(self.objs[name], self.objs), "attributes":
                self.resolve(self.attrs(self.objs[name], self.objs))}


def merge(a, b):
    out = dict(a)
    for k, v in b.items():
        if k == "enum" and isinstance(out.get(k), dict):
            out[k] = {**out[k], **v}
        elif v is not None or k == "profile":
            out[k] = v
    return out


def ocsf(gitdir, tag):
    o = Ocsf(gitdir, tag)
    version = o.load("version.json")["version"]
    classes = {}
    for p in OCSF_CLASSES:
        c = o.cls(p)
        classes[str(c["class_uid"])] = c
    return version, {"schema": "OCSF", "version": version,
                     "source": {"repo": "github:ocsf/ocsf-schema",
                                "tag": tag, "commit": commit(gitdir, tag),
                                "files": ["dictionary.json",
                                          "categories.json", "events/",
                                          "objects/", "profiles/"]},
                     "classes": classes,
                     "objects": {n: o.obj(n) for n in OCSF_OBJECTS}}


def main():
    eg, et, og, ot = sys.argv[1:5]
    out = sys.argv[5] if len(sys.argv) > 5 else "."
    for kind, (ver, doc) in (("fields", ecs(eg, et)),
                             ("classes", ocsf(og, ot))):
        name = f"{out}/{doc['schema'].lower()}-{ver}-{kind}.json"
        with open(name, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")
        print(name)


if __name__ == "__main__":
    main()
