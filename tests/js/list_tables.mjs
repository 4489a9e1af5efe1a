// ListTables with the given credentials: node list_tables.mjs <endpoint> <keyId> <secret> [region]
// Prints one JSON line: {"tables": [...]} or {"error": "<error name>"}.
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";

const [endpoint, accessKeyId, secretAccessKey, region = "us-east-1"] = process.argv.slice(2);
const client = new DynamoDBClient({ endpoint, region, credentials: { accessKeyId, secretAccessKey }, maxAttempts: 1 });
try {
  const listed = await client.send(new ListTablesCommand({}));
  console.log(JSON.stringify({ tables: listed.TableNames }));
} catch (error) {
  console.log(JSON.stringify({ error: error.name }));
}
