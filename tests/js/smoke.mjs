// Drives dynastore with the AWS SDK for JavaScript v3, unchanged.
// Usage: node smoke.mjs <endpoint> <tableName>; prints one JSON line of results.
import { DynamoDBClient, CreateTableCommand, DescribeTableCommand, DeleteTableCommand } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, PutCommand, GetCommand, UpdateCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";

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
  AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }, { AttributeName: "sk", AttributeType: "S" }],
}));
const described = await client.send(new DescribeTableCommand({ TableName }));
await doc.send(new PutCommand({ TableName, Item: { pk: "USER#1", sk: "PROFILE", name: "Ada", tags: new Set(["a", "b"]) } }));
await doc.send(new PutCommand({ TableName, Item: { pk: "USER#1", sk: "ORDER#2", total: 12.5 } }));
const updated = await doc.send(new UpdateCommand({
  TableName, Key: { pk: "USER#1", sk: "PROFILE" },
  UpdateExpression: "SET visits = if_not_exists(visits, :zero) + :one",
  ExpressionAttributeValues: { ":zero": 0, ":one": 1 }, ReturnValues: "ALL_NEW",
}));
const got = await doc.send(new GetCommand({ TableName, Key: { pk: "USER#1", sk: "PROFILE" }, ConsistentRead: true }));
const queried = await doc.send(new QueryCommand({
  TableName, KeyConditionExpression: "pk = :p AND begins_with(sk, :o)",
  ExpressionAttributeValues: { ":p": "USER#1", ":o": "ORDER#" },
}));
let conditionError = null;
try {
  await doc.send(new PutCommand({ TableName, Item: { pk: "USER#1", sk: "PROFILE" }, ConditionExpression: "attribute_not_exists(pk)" }));
} catch (error) { conditionError = error.name; }
await client.send(new DeleteTableCommand({ TableName }));
console.log(JSON.stringify({
  status: described.Table.TableStatus,
  visits: updated.Attributes.visits,
  name: got.Item.name,
  tags: [...got.Item.tags].sort(),
  orders: queried.Items.map((item) => item.total),
  conditionError,
}));
