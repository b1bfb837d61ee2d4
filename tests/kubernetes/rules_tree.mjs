// The rules/ tree the node agent's ConfigMaps carry, written out as
// rules-sync lays it (stockade-rules at the top, -profiles and -network
// beneath), from a rendered overlay.
// usage: node rules_tree.mjs RENDERED.yaml DIR
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

const [file, out] = process.argv.slice(2);
const sub = { "stockade-rules": ".", "stockade-rules-profiles": "profiles",
  "stockade-rules-network": "network" };
for (const d of parseAllDocuments(readFileSync(file, "utf8")).map((x) => x.toJS())) {
  if (d.kind !== "ConfigMap")
    continue;
  if (!(d.metadata.name in sub))
    throw new Error(`a ConfigMap rules-sync does not place: ${d.metadata.name}`);
  const dir = `${out}/${sub[d.metadata.name]}`;
  mkdirSync(dir, { recursive: true });
  for (const [k, v] of Object.entries(d.data))
    writeFileSync(`${dir}/${k}`, v);
}
