// Turn a DynamoDB request into code: boto3 (Python), AWS SDK for JavaScript v3, AWS CLI.

const SNAKE = (name) => name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
const KEBAB = (name) => name.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase();
const LOCAL_ENDPOINT = (endpoint) => endpoint && !/\.amazonaws\.com(\.cn)?\/?$/.test(new URL(endpoint).hostname + "/");

function python(value, indent = 0) {
  const pad = "    ".repeat(indent + 1);
  const end = "    ".repeat(indent);
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) {
    const flat = `[${value.map((item) => python(item, indent + 1)).join(", ")}]`;
    return flat.length < 80 ? flat : `[\n${value.map((item) => pad + python(item, indent + 1)).join(",\n")},\n${end}]`;
  }
  const entries = Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}: ${python(item, indent + 1)}`);
  const flat = `{${entries.join(", ")}}`;
  return flat.length < 80 ? flat : `{\n${entries.map((entry) => pad + entry).join(",\n")},\n${end}}`;
}

// ``region`` (the console's region, where the tables it shows live) is named in
// the code: a client of another region would not find them (global tables'
// replicas are the same table in other regions).
export function boto3Code(operation, params, endpoint, region) {
  const named = region ? `, region_name=${JSON.stringify(region)}` : "";
  const options = LOCAL_ENDPOINT(endpoint) ? `"dynamodb"${named}, endpoint_url=${JSON.stringify(endpoint)}` : `"dynamodb"${named}`;
  const args = Object.entries(params).map(([key, value]) => `    ${key}=${python(value, 1)},`).join("\n");
  return `import boto3\n\nclient = boto3.client(${options})\nresponse = client.${SNAKE(operation)}(\n${args}\n)\n`;
}

function jsLiteral(value) {
  return JSON.stringify(value, null, 2).replace(/^(\s*)"([A-Za-z_$][\w$]*)":/gm, "$1$2:");
}

export function jsV3Code(operation, params, endpoint, region) {
  const command = `${operation}Command`;
  const members = [];
  if (region) members.push(`region: ${JSON.stringify(region)}`);
  if (LOCAL_ENDPOINT(endpoint)) members.push(`endpoint: ${JSON.stringify(endpoint)}`);
  const options = members.length ? `{ ${members.join(", ")} }` : "{}";
  return `import { DynamoDBClient, ${command} } from "@aws-sdk/client-dynamodb";\n\n` +
    `const client = new DynamoDBClient(${options});\n` +
    `const response = await client.send(new ${command}(${jsLiteral(params)}));\n`;
}

function shellQuote(text) { return `'${String(text).replace(/'/g, "'\\''")}'`; }

const CLI_FLAGS = { ScanIndexForward: ["--scan-index-forward", "--no-scan-index-forward"], ConsistentRead: ["--consistent-read", "--no-consistent-read"] };

export function cliCode(operation, params, endpoint, region) {
  const lines = [`aws dynamodb ${KEBAB(operation)}`];
  for (const [key, value] of Object.entries(params)) {
    if (key === "ExclusiveStartKey") continue;
    if (key in CLI_FLAGS) lines.push(CLI_FLAGS[key][value ? 0 : 1]);
    else if (key === "Limit") lines.push(`--max-items ${value}`);
    else if (typeof value === "object") lines.push(`--${KEBAB(key)} ${shellQuote(JSON.stringify(value))}`);
    else if (typeof value === "number") lines.push(`--${KEBAB(key)} ${value}`);
    else lines.push(`--${KEBAB(key)} ${shellQuote(value)}`);
  }
  if (region) lines.push(`--region ${region}`);
  if (LOCAL_ENDPOINT(endpoint)) lines.push(`--endpoint-url ${endpoint}`);
  return lines.join(" \\\n    ") + "\n";
}

export const GENERATORS = [["boto3", boto3Code], ["JS SDK v3", jsV3Code], ["AWS CLI", cliCode]];
