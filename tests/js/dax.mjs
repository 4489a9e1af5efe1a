// Drives dynastore's DAX endpoint with Amazon's JavaScript v3 DAX client
// (@amazon-dax-sdk/client-dax), unchanged. The table exists (created over HTTP).
// Usage: node dax.mjs <dax-url> <tableName> [<http-endpoint>]; prints one JSON line
// of results. With the HTTP endpoint it also writes around DAX (the AWS SDK v3) and
// reads the stale item back through DAX.
import { Dax } from "@amazon-dax-sdk/client-dax";
import { DynamoDBClient, PutItemCommand } from "@aws-sdk/client-dynamodb";

const [endpoint, TableName, httpEndpoint] = process.argv.slice(2);
const dax = new Dax({
  endpoints: [endpoint], region: "us-east-1",
  credentials: { accessKeyId: "AKIDTEST", secretAccessKey: "secret" },
  maxRetries: 0,
});
const key = { pk: { S: "USER#1" }, sk: { N: "1" } };
const results = {};
try {
  await dax.putItem({ TableName, Item: { ...key, name: { S: "Ada" }, tags: { SS: ["a", "b"] }, n: { N: "1.5" } } });
  results.got = await dax.getItem({ TableName, Key: key });
  results.projected = await dax.getItem({ TableName, Key: key, ProjectionExpression: "#n", ExpressionAttributeNames: { "#n": "name" } });
  results.updated = await dax.updateItem({
    TableName, Key: key, UpdateExpression: "SET visits = if_not_exists(visits, :zero) + :one",
    ExpressionAttributeValues: { ":zero": { N: "0" }, ":one": { N: "1" } }, ReturnValues: "ALL_NEW",
  });
  results.cached = await dax.getItem({ TableName, Key: key });
  await dax.batchWriteItem({ RequestItems: { [TableName]: [2, 3, 4].map((n) => ({ PutRequest: { Item: { pk: key.pk, sk: { N: String(n) } } } })) } });
  results.batch = await dax.batchGetItem({ RequestItems: { [TableName]: { Keys: [{ pk: key.pk, sk: { N: "2" } }, { pk: key.pk, sk: { N: "9" } }] } } });
  results.queried = await dax.query({ TableName, KeyConditionExpression: "pk = :p AND sk > :one", ExpressionAttributeValues: { ":p": key.pk, ":one": { N: "1" } }, ConsistentRead: true });
  results.scanned = await dax.scan({ TableName, Limit: 2 });
  results.transactWrite = await dax.transactWriteItems({ TransactItems: [
    { Update: { TableName, Key: key, UpdateExpression: "ADD visits :one", ExpressionAttributeValues: { ":one": { N: "1" } } } },
    { Delete: { TableName, Key: { pk: key.pk, sk: { N: "4" } } } },
  ] });
  try {
    await dax.transactWriteItems({ TransactItems: [
      { Put: { TableName, Item: { pk: key.pk, sk: { N: "8" } } } },
      { ConditionCheck: { TableName, Key: key, ConditionExpression: "visits = :zero", ExpressionAttributeValues: { ":zero": { N: "0" } },
                          ReturnValuesOnConditionCheckFailure: "ALL_OLD" } },
    ] });
  } catch (error) {
    results.cancelled = { code: error.code, message: error.message, reasons: error.cancellationReasons };
  }
  results.transactGet = await dax.transactGetItems({ TransactItems: [{ Get: { TableName, Key: key } }] });
  results.deleted = await dax.deleteItem({ TableName, Key: { pk: key.pk, sk: { N: "3" } }, ReturnValues: "ALL_OLD" });
  if (httpEndpoint) {
    const around = { pk: key.pk, sk: { N: "7" } };
    await dax.putItem({ TableName, Item: { ...around, v: { S: "old" } } });
    const http = new DynamoDBClient({ endpoint: httpEndpoint, region: "us-east-1", maxAttempts: 1,
                                      credentials: { accessKeyId: "AKIDTEST", secretAccessKey: "secret" } });
    await http.send(new PutItemCommand({ TableName, Item: { ...around, v: { S: "new" } } }));
    results.stale = await dax.getItem({ TableName, Key: around });
    results.fresh = await dax.getItem({ TableName, Key: around, ConsistentRead: true });
    http.destroy();
  }
  try {
    await dax.putItem({ TableName, Item: key, ConditionExpression: "attribute_not_exists(pk)" });
  } catch (error) {
    results.conditionError = { name: error.name, code: error.code, message: error.message };
  }
  try {
    await dax.getItem({ TableName: "dax-no-such-table", Key: { pk: { S: "x" } } });
  } catch (error) {
    results.missingTableError = { name: error.name, code: error.code, message: error.message };
  }
} catch (error) {
  results.unexpected = { name: error.name, code: error.code, message: error.message, stack: error.stack };
} finally {
  dax.shutdown?.();
}
const strip = (value) => JSON.parse(JSON.stringify(value, (k, v) => (k === "$metadata" ? undefined : v)));
console.log(JSON.stringify(strip(results)));
process.exit(0);
