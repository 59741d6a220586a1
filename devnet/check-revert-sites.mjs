// Checks the reverts the compiler cannot: every `_revert(Name.selector, args...)` in the contract
// sources (BbvflBase's assembly helper, kept where EIP-170 forbids compiler-checked reverts; see
// contract/GAS.md) must name a custom error that abi/ declares, pass exactly as many arguments as
// that error has, and that error's arguments must all be one static word (uint/int/bool/address/
// bytesN: the helper stores each argument as a 32-byte word). Argument types beyond that are not
// checked. Usage: node check-revert-sites.mjs SRC_DIR ABI_DIR; exit 1 and one line per bad site.
import fs from "node:fs";
import path from "node:path";

const [srcDir, abiDir] = process.argv.slice(2);
const errors = new Map(); // name -> list of input types (the same name declared twice must agree)
for (const f of fs.readdirSync(abiDir).filter((f) => f.endsWith(".json"))) {
  for (const e of JSON.parse(fs.readFileSync(path.join(abiDir, f), "utf8")).abi) {
    if (e.type !== "error") continue;
    const types = e.inputs.map((i) => i.type);
    const had = errors.get(e.name);
    if (had && had.join(",") !== types.join(",")) {
      console.error(`check-revert-sites: error ${e.name} declared as (${had}) and (${types})`);
      process.exitCode = 1;
    }
    errors.set(e.name, types);
  }
}
const staticWord = /^(u?int\d*|bool|address|bytes([1-9]|[12]\d|3[0-2]))$/;

// Splits "a, f(b, c), d" at the top-level commas.
function splitArgs(s) {
  const out = [];
  let depth = 0;
  let cur = "";
  for (const ch of s) {
    if (ch === "(" || ch === "[") depth++;
    if (ch === ")" || ch === "]") depth--;
    if (ch === "," && depth === 0) {
      out.push(cur.trim());
      cur = "";
    } else cur += ch;
  }
  if (cur.trim() !== "") out.push(cur.trim());
  return out;
}

let sites = 0;
for (const f of fs.readdirSync(srcDir).filter((f) => f.endsWith(".sol")).sort()) {
  const lines = fs.readFileSync(path.join(srcDir, f), "utf8").split("\n");
  lines.forEach((line, i) => {
    if (/^\s*(\/\/|\/\*|\*)/.test(line) || /function _revert\(/.test(line)) return;
    for (const m of line.matchAll(/\b_revert\((\w+)\.selector((?:,[^;]*)?)\);/g)) {
      sites++;
      const where = `${f}:${i + 1}`;
      const types = errors.get(m[1]);
      const args = splitArgs(m[2].replace(/^,/, ""));
      if (!types) {
        console.error(`${where}: _revert of ${m[1]}, which no contract in abi/ declares`);
        process.exitCode = 1;
      } else if (types.length !== args.length) {
        console.error(`${where}: ${m[1]}(${types}) takes ${types.length} argument(s), _revert passes ${args.length}`);
        process.exitCode = 1;
      } else if (!types.every((t) => staticWord.test(t))) {
        console.error(`${where}: ${m[1]}(${types}) has an argument that is not one static word`);
        process.exitCode = 1;
      }
    }
    if (/\b_revert\(/.test(line) && !/\b_revert\(\w+\.selector(?:,[^;]*)?\);/.test(line)) {
      console.error(`${f}:${i + 1}: a _revert call this check cannot read (write it on one line)`);
      process.exitCode = 1;
    }
  });
}
if (!process.exitCode) console.log(`_revert sites match their errors (${sites} sites)`);
