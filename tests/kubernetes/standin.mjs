// The podman stand-in's input: the rendered overlays/podman made into what
// podman 4.3's `kube play` runs (it plays Pods, ConfigMaps and volume
// claims, not StatefulSets, Services or disruption budgets).  The
// StatefulSet's pod template becomes its pod number N (--pod N; default
// 0), stockade-node-N, as the controller would make it (hostname,
// subdomain, one claim per template); the sidecars (init containers with
// restartPolicy: Always, which podman 4.3 would wait on forever) become
// containers, first; each Secret volume becomes a hostPath directory given
// on the command line (Secret volumes crash podman 4.3).  Three things
// podman 4.3 does that a kubelet does not are undone, so that several
// such pods can play side by side (tests/kubernetes/fleet.sh): it
// publishes every containerPort on the host's own port (a node is reached
// at its pod's address on the pod network, so ports are left out); it
// makes each emptyDir a named volume called as the pod names it, which
// every pod naming it alike would share (each is renamed after its pod);
// and it passes a command's $(VAR) on as written, where the kubelet puts
// the container's variable in (mcp-exec's --node-id: done here, for
// variables of a value or of the pod's name).  Everything else is played
// as rendered.
// usage: node standin.mjs [--pod N] RENDERED.yaml SECRET=DIR... > pod.yaml
import { readFileSync } from "node:fs";
import { parseAllDocuments, stringify } from "yaml";

const args = process.argv.slice(2);
let ordinal = 0;
if (args[0] === "--pod") {
  ordinal = Number(args[1]);
  args.splice(0, 2);
}
const [file, ...maps] = args;
const secrets = Object.fromEntries(maps.map((m) => m.split("=", 2)));
const docs = parseAllDocuments(readFileSync(file, "utf8")).map((d) => d.toJS());
const sts = docs.find((d) => d.kind === "StatefulSet");
if (!Number.isInteger(ordinal) || ordinal < 0)
  throw new Error("--pod: a pod's ordinal, 0 or more");
const name = `${sts.metadata.name}-${ordinal}`;
const spec = structuredClone(sts.spec.template.spec);
const out = docs.filter((d) => d.kind === "ConfigMap");

spec.hostname = name;
spec.restartPolicy = "OnFailure";
spec.subdomain = sts.spec.serviceName;
const sidecars = spec.initContainers.filter((c) => c.restartPolicy === "Always");
spec.initContainers = spec.initContainers.filter((c) => c.restartPolicy !== "Always");
for (const c of sidecars)
  delete c.restartPolicy;
spec.containers = [...sidecars, ...spec.containers];
const all = [...spec.initContainers, ...spec.containers];
for (const c of all) {
  delete c.ports;
  const vars = {};
  for (const e of c.env ?? [])
    if (e.value !== undefined)
      vars[e.name] = e.value;
    else if (e.valueFrom?.fieldRef?.fieldPath === "metadata.name")
      vars[e.name] = name;
  const expand = (a) => a.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g,
    (whole, v) => vars[v] ?? whole);
  for (const k of ["command", "args"])
    if (c[k] !== undefined)
      c[k] = c[k].map(expand);
}
for (const v of spec.volumes) {
  if (v.emptyDir !== undefined) {
    const own = `${name}-${v.name}`;
    for (const c of all)
      for (const m of c.volumeMounts ?? [])
        if (m.name === v.name)
          m.name = own;
    v.name = own;
  }
  if (v.secret === undefined)
    continue;
  const dir = secrets[v.secret.secretName];
  if (dir === undefined)
    throw new Error(`no directory given for Secret ${v.secret.secretName}`);
  delete v.secret;
  v.hostPath = { path: dir, type: "Directory" };
}
for (const t of sts.spec.volumeClaimTemplates ?? []) {
  const claim = `${t.metadata.name}-${name}`;
  out.push({ apiVersion: "v1", kind: "PersistentVolumeClaim",
    metadata: { name: claim }, spec: t.spec });
  spec.volumes.push({ name: t.metadata.name,
    persistentVolumeClaim: { claimName: claim } });
}
out.push({ apiVersion: "v1", kind: "Pod",
  metadata: { name, labels: sts.spec.template.metadata.labels }, spec });
process.stdout.write(out.map((d) => stringify(d)).join("---\n"));
