// Validates rendered manifests (kubectl kustomize's output, files named on
// the command line): every object against the Kubernetes API schema of its
// kind (npm kubernetes-models, pinned in package-lock.json), then what
// those schemas cannot say: the least privilege each container of the node
// agent is given (docs/kubernetes.md), mounts that name a volume, and
// selectors that select the pods.  The schemas check types, enums and
// required fields, not unknown ones: a misspelt field is caught here only
// where a rule below reads it.  Prints one line per object; exit 1 with
// every problem found.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

const problems = [];
const fail = (where, msg) => problems.push(`${where}: ${msg}`);

// Capabilities each container may add (docs/kubernetes.md says why).
const CAPS = {
  "run-dirs": ["CHOWN"],
  "checkpoint-key": ["CHOWN", "FOWNER"],
  "rules-check": [],
  "stockade-auditd": [],
  netguard: ["NET_ADMIN", "SYS_ADMIN", "SYS_PTRACE", "NET_BIND_SERVICE"],
  "mcp-exec": ["SYS_ADMIN", "SETUID", "SETGID", "DAC_OVERRIDE"],
  "rules-sync": ["KILL"],
};
// The only containers that may run outside the runtime's AppArmor profile:
// they mount (container-start, netguard's namespace binds, sandboxes).
const UNCONFINED_APPARMOR = ["netguard", "mcp-exec"];

async function schemaCheck(doc, where) {
  let mod;
  try {
    mod = await import(`kubernetes-models/${doc.apiVersion}`);
  } catch {
    return fail(where, `no schema for apiVersion ${doc.apiVersion}`);
  }
  const Model = mod[doc.kind];
  if (Model === undefined)
    return fail(where, `no schema for kind ${doc.kind}`);
  try {
    new Model(doc).validate();
  } catch (e) {
    fail(where, e.message);
  }
}

function containerCheck(c, where, sidecar) {
  const sc = c.securityContext;
  if (!(c.name in CAPS))
    return fail(where, "a container no rule here knows: add its least privilege");
  if (sc === undefined)
    return fail(where, "no securityContext");
  const drop = sc.capabilities?.drop ?? [];
  if (drop.length !== 1 || drop[0] !== "ALL")
    fail(where, `capabilities.drop must be [ALL], not ${JSON.stringify(drop)}`);
  const add = [...(sc.capabilities?.add ?? [])].sort();
  const want = [...CAPS[c.name]].sort();
  if (JSON.stringify(add) !== JSON.stringify(want))
    fail(where, `capabilities.add ${JSON.stringify(add)}, documented ${JSON.stringify(want)}`);
  if (sc.privileged === true)
    fail(where, "privileged");
  // The API refuses allowPrivilegeEscalation: false beside SYS_ADMIN;
  // everything else must say false.
  const escalates = add.includes("SYS_ADMIN");
  if (sc.allowPrivilegeEscalation !== escalates)
    fail(where, `allowPrivilegeEscalation must be ${escalates}`);
  if (sc.readOnlyRootFilesystem !== true)
    fail(where, "readOnlyRootFilesystem must be true");
  if (typeof sc.runAsUser !== "number")
    fail(where, "runAsUser must be said");
  if (sc.runAsUser !== 0 && sc.runAsNonRoot !== true)
    fail(where, "a non-root container must say runAsNonRoot");
  if (sc.runAsUser !== 0 && add.length > 0)
    fail(where, "capabilities added to a non-root user never take effect");
  if (sc.seccompProfile !== undefined && sc.seccompProfile.type !== "RuntimeDefault")
    fail(where, `seccompProfile ${sc.seccompProfile.type}`);
  const aa = sc.appArmorProfile?.type ?? "RuntimeDefault";
  if (aa !== "RuntimeDefault" && !UNCONFINED_APPARMOR.includes(c.name))
    fail(where, `appArmorProfile ${aa}`);
  if (sc.procMount !== undefined && sc.procMount !== "Default")
    fail(where, "procMount Unmasked needs hostUsers: false (container-start unmasks instead)");
  if (sidecar && c.restartPolicy !== "Always")
    fail(where, "a daemon among the init containers must be a sidecar (restartPolicy: Always)");
}

function podCheck(spec, labels, where) {
  const vols = new Set((spec.volumes ?? []).map((v) => v.name));
  for (const t of spec._claims ?? []) vols.add(t);
  if (spec.securityContext?.seccompProfile?.type !== "RuntimeDefault")
    fail(where, "the pod's seccompProfile must be RuntimeDefault");
  if (spec.hostNetwork || spec.hostPID || spec.hostIPC)
    fail(where, "host namespaces");
  if (spec.shareProcessNamespace !== true)
    fail(where, "shareProcessNamespace: rules-sync and netguard need it");
  const daemons = ["stockade-auditd", "netguard"];
  for (const c of spec.initContainers ?? [])
    containerCheck(c, `${where} initContainer ${c.name}`, daemons.includes(c.name));
  for (const c of spec.containers ?? [])
    containerCheck(c, `${where} container ${c.name}`, false);
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])])
    for (const m of c.volumeMounts ?? [])
      if (!vols.has(m.name))
        fail(`${where} ${c.name}`, `mounts volume ${m.name}, which the pod has not`);
  const auditd = (spec.initContainers ?? []).find((c) => c.name === "stockade-auditd");
  if (auditd?.securityContext?.runAsUser === 0)
    fail(where, "stockade-auditd runs as root");
  const mcp = (spec.containers ?? []).find((c) => c.name === "mcp-exec");
  if (JSON.stringify(mcp?.readinessProbe?.exec?.command) !==
      JSON.stringify(["stockade", "status", "--ready"]))
    fail(where, "mcp-exec's readiness must be `stockade status --ready`");
  // Handles name the node that minted them, and the router resolves that
  // name: it must be the pod's own (docs/fleet-routing.md).
  const cmd = mcp?.command ?? [];
  const nodeEnv = (mcp?.env ?? []).find((e) => e.name === "STOCKADE_NODE");
  if (cmd[cmd.indexOf("--node-id") + 1] !== "$(STOCKADE_NODE)" ||
      nodeEnv?.valueFrom?.fieldRef?.fieldPath !== "metadata.name")
    fail(where, "mcp-exec's --node-id must be the pod's name ($(STOCKADE_NODE) from metadata.name)");
  return labels;
}

function selects(selector, labels) {
  return selector !== undefined && Object.keys(selector).length > 0 &&
    Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

const docs = [];
for (const f of process.argv.slice(2))
  for (const d of parseAllDocuments(readFileSync(f, "utf8"))) {
    if (d.errors.length > 0)
      fail(f, d.errors.map((e) => e.message).join("; "));
    else if (d.contents !== null)
      docs.push([f, d.toJS()]);
  }

let podLabels;
for (const [f, doc] of docs) {
  const where = `${f}: ${doc.kind}/${doc.metadata?.name}`;
  await schemaCheck(doc, where);
  if (doc.kind === "StatefulSet") {
    const spec = { ...doc.spec.template.spec,
      _claims: (doc.spec.volumeClaimTemplates ?? []).map((t) => t.metadata.name) };
    podLabels = podCheck(spec, doc.spec.template.metadata?.labels, where);
    if (!selects(doc.spec.selector?.matchLabels, podLabels))
      fail(where, "its selector does not select its pods");
  } else if (doc.kind === "Pod")
    podLabels = podCheck(doc.spec, doc.metadata?.labels, where);
  console.log(`checked ${where}`);
}
for (const [f, doc] of docs) {
  const where = `${f}: ${doc.kind}/${doc.metadata?.name}`;
  if (doc.kind === "Service") {
    if (doc.spec.clusterIP !== "None")
      fail(where, "the node agents' Service must be headless");
    if (!selects(doc.spec.selector, podLabels))
      fail(where, "selects no node agent");
  } else if (doc.kind === "PodDisruptionBudget" &&
      !selects(doc.spec.selector?.matchLabels, podLabels))
    fail(where, "selects no node agent");
}
if (problems.length > 0) {
  for (const p of problems) console.log(`FAIL ${p}`);
  process.exit(1);
}
console.log(`${docs.length} objects valid`);
