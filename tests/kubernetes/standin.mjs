// The podman stand-in's input: the rendered overlays/podman made into what
// podman 4.3's `kube play` runs (it plays Pods, ConfigMaps and volume
// claims, not StatefulSets, Services or disruption budgets).  The
// StatefulSet's pod template becomes its first pod, stockade-node-0, as
// the controller would make it (hostname, subdomain, one claim per
// template); the sidecars (init containers with restartPolicy: Always,
// which podman 4.3 would wait on forever) become containers, first; each
// Secret volume becomes a hostPath directory given on the command line
// (Secret volumes crash podman 4.3).  Everything else is played as
// rendered.
// usage: node standin.mjs RENDERED.yaml SECRET=DIR... > pod.yaml
import { readFileSync } from "node:fs";
import { parseAllDocuments, stringify } from "yaml";

const [file, ...maps] = process.argv.slice(2);
const secrets = Object.fromEntries(maps.map((m) => m.split("=", 2)));
const docs = parseAllDocuments(readFileSync(file, "utf8")).map((d) => d.toJS());
const sts = docs.find((d) => d.kind === "StatefulSet");
const name = `${sts.metadata.name}-0`;
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
for (const v of spec.volumes) {
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
