// Reads a JUnit XML report from stdin with junit2json (the consumer CI
// dashboards use to load test reports) and prints what it understood as
// JSON: the suites, their counts, and each case with its failure/error.
import { parse } from "junit2json";

let xml = "";
process.stdin.setEncoding("utf8");
for await (const chunk of process.stdin) xml += chunk;
const report = await parse(xml);
process.stdout.write(JSON.stringify(report) + "\n");
