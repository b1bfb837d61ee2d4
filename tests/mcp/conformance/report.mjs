// One line per server scenario of the conformance tool's results, judged
// against expected-failures.yaml: PASS, XFAIL (fails as listed, with the
// reason), FAIL (fails but is not listed) or XPASS (passes but is listed:
// the list has gone stale).  Exits 1 on any FAIL or XPASS.
// Usage: report.mjs SCENARIO-LIST RESULTS-DIR EXPECTED-FAILURES SECONDS
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { join } from "node:path";

const [listFile, resultsDir, expectedFile, seconds] = process.argv.slice(2);
let bad = 0;

// `conformance list --server` prints "  - name [spec versions]".
const scenarios = readFileSync(listFile, "utf8").split("\n")
  .map((l) => l.match(/^\s+- (\S+)/)?.[1]).filter(Boolean);
if (scenarios.length === 0) {
  console.log("FAIL conformance: the tool lists no server scenarios");
  process.exit(1);
}

// The tool reads the same file as YAML; the comments are ours.
const expected = new Map();
readFileSync(expectedFile, "utf8").split("\n").forEach((line, i) => {
  const m = line.match(/^\s+-\s+(\S+)\s*(?:#\s*(.*))?$/);
  if (!m) return;
  if (!m[2] || !scenarios.includes(m[1])) {
    console.log(`FAIL ${expectedFile}:${i + 1}: ` +
      (m[2] ? `no server scenario ${m[1]}` : `${m[1]} has no reason`));
    bad++;
  }
  expected.set(m[1], m[2]);
});

// Results go to RESULTS-DIR/server-<scenario>-<timestamp>/checks.json.
const dirs = new Map();
for (const d of existsSync(resultsDir) ? readdirSync(resultsDir) : []) {
  const m = d.match(/^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/);
  if (m) dirs.set(m[1], join(resultsDir, d, "checks.json"));
}

const counts = { PASS: 0, XFAIL: 0, FAIL: 0, XPASS: 0 };
for (const name of scenarios) {
  let checks = [];
  let why;
  try {
    checks = JSON.parse(readFileSync(dirs.get(name), "utf8"));
  } catch {
    why = "no results: the scenario did not run";
  }
  // As the tool's own baseline check: a WARNING fails a scenario too.
  const failed = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
  why ??= failed.map((c) => `${c.id}: ${(c.errorMessage ?? c.description).split("\n")[0]}`)
    .join("; ");
  const listed = expected.has(name);
  let verdict;
  if (why === "") verdict = listed ? "XPASS" : "PASS";
  else verdict = listed ? "XFAIL" : "FAIL";
  counts[verdict]++;
  if (verdict === "PASS")
    console.log(`PASS conformance ${name}`);
  else if (verdict === "XFAIL")
    console.log(`XFAIL conformance ${name}: ${expected.get(name)}`);
  else if (verdict === "FAIL")
    console.log(`FAIL conformance ${name}: ${why}`);
  else
    console.log(`XPASS conformance ${name}: passes now; delete it from expected-failures.yaml`);
}
bad += counts.FAIL + counts.XPASS;
console.log(`conformance: ${scenarios.length} server scenarios in ${seconds} s: ` +
  `${counts.PASS} pass, ${counts.XFAIL} fail as expected, ` +
  `${counts.FAIL} fail unexpectedly, ${counts.XPASS} pass unexpectedly`);
process.exit(bad > 0 ? 1 : 0);
