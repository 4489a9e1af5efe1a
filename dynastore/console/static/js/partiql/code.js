// An ExecuteStatement request as code: boto3, the JavaScript SDK v3 and the AWS CLI
// (`aws dynamodb execute-statement --statement ... --parameters ...`).

import { boto3Code, jsV3Code } from "../codegen.js";

const LOCAL_ENDPOINT = (endpoint) => endpoint && !/\.amazonaws\.com(\.cn)?\/?$/.test(new URL(endpoint).hostname + "/"); // as codegen.js

/** The request the editor runs: Statement, then Parameters, Limit, ConsistentRead when given. */
export function executeStatementRequest(statement, { parameters = [], limit = null, consistentRead = false } = {}) {
  const request = { Statement: statement };
  if (parameters && parameters.length) request.Parameters = parameters;
  if (limit) request.Limit = Number(limit);
  if (consistentRead) request.ConsistentRead = true;
  return request;
}

function shellQuote(text) { return `'${String(text).replace(/'/g, "'\\''")}'`; }

/** The AWS CLI call. ExecuteStatement has no CLI paginator, so Limit is --limit (not --max-items). */
export function executeStatementCli(request, endpoint, region) {
  const lines = [`aws dynamodb execute-statement`, `--statement ${shellQuote(request.Statement)}`];
  if (request.Parameters) lines.push(`--parameters ${shellQuote(JSON.stringify(request.Parameters))}`);
  if (request.Limit) lines.push(`--limit ${request.Limit}`);
  if (request.ConsistentRead) lines.push("--consistent-read");
  if (request.NextToken) lines.push(`--next-token ${shellQuote(request.NextToken)}`);
  if (request.ReturnConsumedCapacity) lines.push(`--return-consumed-capacity ${request.ReturnConsumedCapacity}`);
  if (region) lines.push(`--region ${region}`);
  if (LOCAL_ENDPOINT(endpoint)) lines.push(`--endpoint-url ${endpoint}`);
  return lines.join(" \\\n    ") + "\n";
}

export const STATEMENT_GENERATORS = [
  ["boto3", (request, endpoint, region) => boto3Code("ExecuteStatement", request, endpoint, region)],
  ["JS SDK v3", (request, endpoint, region) => jsV3Code("ExecuteStatement", request, endpoint, region)],
  ["AWS CLI", executeStatementCli],
];
