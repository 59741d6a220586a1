// Collects forge's build output for the contracts defined under a source folder into one
// small, stable JSON file per contract. Usage: node extract-abi.mjs SRC_DIR FORGE_OUT OUT_DIR
import fs from "node:fs";
import path from "node:path";

const [srcDir, forgeOut, outDir] = process.argv.slice(2);
const sources = fs.readdirSync(srcDir).filter((f) => f.endsWith(".sol")).sort();
let written = 0;
for (const src of sources) {
  const text = fs.readFileSync(path.join(srcDir, src), "utf8");
  // contracts (not interfaces or libraries) defined in this file
  const names = [...text.matchAll(/^\s*(?:abstract\s+)?contract\s+([A-Za-z_][A-Za-z0-9_]*)/gm)]
    .filter((m) => !/abstract/.test(m[0]))
    .map((m) => m[1]);
  for (const name of names) {
    const artifact = path.join(forgeOut, src, `${name}.json`);
    const a = JSON.parse(fs.readFileSync(artifact, "utf8"));
    const doc = {
      contractName: name,
      source: `contract/src/${src}`,
      abi: a.abi,
      bytecode: a.bytecode.object,
      deployedBytecode: a.deployedBytecode.object,
    };
    fs.writeFileSync(path.join(outDir, `${name}.json`), JSON.stringify(doc, null, 1) + "\n");
    written++;
  }
}
if (written === 0) {
  console.error(`extract-abi: no contracts found under ${srcDir}`);
  process.exit(1);
}
