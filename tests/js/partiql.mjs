// PartiQL through the AWS SDK for JavaScript v3, unchanged.
// Usage: node partiql.mjs <endpoint> <tableName>; prints one JSON line of results.
import {
  DynamoDBClient, CreateTableCommand, DeleteTableCommand, ExecuteStatementCommand,
  BatchExecuteStatementCommand, ExecuteTransactionCommand,
} from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, ExecuteStatementCommand as DocExecuteStatement } from "@aws-sdk/lib-dynamodb";

const [endpoint, TableName] = process.argv.slice(2);
const client = new DynamoDBClient({
  endpoint, region: "us-east-1",
  credentials: { accessKeyId: "AKIDTEST", secretAccessKey: "secret" },
  maxAttempts: 1,
});
const doc = DynamoDBDocumentClient.from(client);

await client.send(new CreateTableCommand({
  TableName, BillingMode: "PAY_PER_REQUEST",
  KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }, { AttributeName: "sk", KeyType: "RANGE" }],
  AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }, { AttributeName: "sk", AttributeType: "N" }],
}));
const table = `"${TableName}"`;
await doc.send(new DocExecuteStatement({
  Statement: `INSERT INTO ${table} VALUE {'pk': ?, 'sk': ?, 'name': ?, 'tags': <<'a', 'b'>>}`,
  Parameters: ["USER#1", 1, "Ada"],
}));
await client.send(new ExecuteStatementCommand({ Statement: `INSERT INTO ${table} VALUE {'pk': 'USER#1', 'sk': 2, 'total': 12.5}` }));
const selected = await doc.send(new DocExecuteStatement({
  Statement: `SELECT * FROM ${table} WHERE pk = ? AND sk = ?`, Parameters: ["USER#1", 1], ConsistentRead: true,
}));
const queried = await doc.send(new DocExecuteStatement({
  Statement: `SELECT sk FROM ${table} WHERE pk = 'USER#1' ORDER BY sk DESC`, ReturnConsumedCapacity: "TOTAL",
}));
const updated = await doc.send(new DocExecuteStatement({
  Statement: `UPDATE ${table} SET visits = 1 SET tags = set_add(tags, <<'c'>>) WHERE pk = 'USER#1' AND sk = 1 RETURNING MODIFIED NEW *`,
}));
let duplicate = null;
try {
  await client.send(new ExecuteStatementCommand({ Statement: `INSERT INTO ${table} VALUE {'pk': 'USER#1', 'sk': 1}` }));
} catch (error) { duplicate = `${error.name}: ${error.message}`; }
let malformed = null;
try {
  await client.send(new ExecuteStatementCommand({ Statement: `SELECT * FROM ${table} WHERE` }));
} catch (error) { malformed = `${error.name}: ${error.message}`; }
const batch = await client.send(new BatchExecuteStatementCommand({ Statements: [
  { Statement: `SELECT name FROM ${table} WHERE pk = 'USER#1' AND sk = 1` },
  { Statement: `SELECT name FROM ${table} WHERE pk = 'USER#1'` },
] }));
let cancelled = null;
try {
  await client.send(new ExecuteTransactionCommand({ TransactStatements: [
    { Statement: `DELETE FROM ${table} WHERE pk = 'USER#1' AND sk = 2` },
    { Statement: `INSERT INTO ${table} VALUE {'pk': 'USER#1', 'sk': 1}` },
  ] }));
} catch (error) { cancelled = [error.name, error.CancellationReasons.map((reason) => reason.Code)]; }
const after = await client.send(new ExecuteStatementCommand({ Statement: `SELECT sk FROM ${table} WHERE pk = 'USER#1'` }));
await client.send(new DeleteTableCommand({ TableName }));
console.log(JSON.stringify({
  selected: selected.Items.map((item) => [item.name, [...item.tags].sort()]),
  queried: queried.Items.map((item) => item.sk),
  capacity: queried.ConsumedCapacity.CapacityUnits,
  updated: updated.Items.map((item) => [item.visits, [...item.tags].sort()]),
  duplicate,
  malformed,
  batch: batch.Responses.map((response) => response.Error ? response.Error.Code : response.Item.name.S),
  cancelled,
  after: after.Items.map((item) => item.sk.N),
}));
