// Pure helpers of the Import / Export page (views/io.js): the requests it sends to the
// server's export and import machinery (ExportTableToPointInTime, ImportTable), where an
// export's files are, and the progress text of a job. No DOM here: unit-tested with node
// (tests/console/units.mjs).

export const DEFAULT_EXPORT_BUCKET = "dynastore-exports";
export const EXPORT_FORMATS = ["DYNAMODB_JSON", "ION"];
export const IMPORT_FORMATS = ["DYNAMODB_JSON", "ION", "CSV"];
export const COMPRESSIONS = ["NONE", "GZIP", "ZSTD"];
export const KEY_TYPES = ["S", "N", "B"];
export const POLL_MS = 500;
const FINISHED = new Set(["COMPLETED", "FAILED", "CANCELLED", "AVAILABLE", "DELETED"]);
const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;
const BUCKET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{1,254}$/;

/** True once a job's status will not change any more. */
export function isFinished(status) { return FINISHED.has(status); }

/** The default prefix of a table's exports: one folder per table in the bucket. */
export function defaultExportPrefix(tableName) { return `exports/${tableName}`; }

function checkBucket(bucket) {
  const name = String(bucket || "").trim();
  if (!BUCKET_NAME.test(name)) throw new Error("The bucket needs a name of letters, digits, '.', '-' or '_' (no '/')");
  return name;
}

function cleanPrefix(prefix) { return String(prefix || "").trim().replace(/^\/+|\/+$/g, ""); }

function epochSeconds(text, label) {
  const millis = Date.parse(text);
  if (Number.isNaN(millis)) throw new Error(`${label} is not a date and time`);
  return millis / 1000;
}

/** ExportTableToPointInTime's request from the page's form (throws on a field at fault). */
export function exportRequest({ tableArn, bucket, prefix, format = "DYNAMODB_JSON", type = "FULL_EXPORT", exportTime, fromTime, toTime, viewType = "NEW_AND_OLD_IMAGES" }) {
  if (!EXPORT_FORMATS.includes(format)) throw new Error(`Unknown export format ${format}`);
  const request = { TableArn: tableArn, S3Bucket: checkBucket(bucket), ExportFormat: format, ExportType: type };
  const cleaned = cleanPrefix(prefix);
  if (cleaned) request.S3Prefix = cleaned;
  if (type === "INCREMENTAL_EXPORT") {
    if (!fromTime) throw new Error("An incremental export needs the time to export from");
    const spec = { ExportFromTime: epochSeconds(fromTime, "Export from"), ExportViewType: viewType };
    if (toTime) spec.ExportToTime = epochSeconds(toTime, "Export to");
    request.IncrementalExportSpecification = spec;
  } else if (type === "FULL_EXPORT") {
    if (exportTime) request.ExportTime = epochSeconds(exportTime, "Export time");
  } else {
    throw new Error(`Unknown export type ${type}`);
  }
  return request;
}

/** The export id: the tail of its ARN (``.../export/<id>``). */
export function exportId(arn) { return String(arn || "").split("/export/").pop(); }

export const EXPORTS_SHOWN = 25;

/** The ``limit`` newest of ListExports' summaries: an export id begins with its start
 * time in milliseconds (``01764748800000-a1b2c3d4``), so it orders them by time. */
export function newestExports(summaries, limit = EXPORTS_SHOWN) {
  return [...summaries].sort((a, b) => exportId(b.ExportArn).localeCompare(exportId(a.ExportArn))).slice(0, limit);
}

/** The folder of an export's files inside its bucket: ``<prefix>/AWSDynamoDB/<id>/``. */
export function exportFolder(description) {
  const prefix = cleanPrefix(description.S3Prefix);
  return `${prefix ? `${prefix}/` : ""}AWSDynamoDB/${exportId(description.ExportArn)}/`;
}

/**
 * Where an export's files are, for a person: the S3 URL, and on a server keeping its
 * buckets as folders (config.json's ``buckets`` = "folders under DIR") the folder on its disk.
 */
export function filesLocation(buckets, description) {
  const folder = exportFolder(description);
  const s3 = `s3://${description.S3Bucket}/${folder}`;
  const local = /^folders under (.+)$/.exec(buckets || "");
  return local ? { s3, path: `${local[1].replace(/\/+$/, "")}/${description.S3Bucket}/${folder}` } : { s3, path: null };
}

/** The S3KeyPrefix that imports an export's data files. */
export function importPrefixOfExport(description) { return `${exportFolder(description)}data/`; }

function formatBytesText(bytes) {
  const value = Number(bytes) || 0;
  const units = ["B", "KB", "MB", "GB", "TB"];
  let scaled = value, unit = 0;
  while (scaled >= 1024 && unit < units.length - 1) { scaled /= 1024; unit += 1; }
  return unit === 0 ? `${value} B` : `${scaled.toFixed(scaled < 10 ? 1 : 0)} ${units[unit]}`;
}
const count = (n) => Number(n || 0).toLocaleString("en-US");

/** Seconds since the epoch (DynamoDB's JSON timestamps) as an ISO text; "" without one. */
export function timeText(seconds) {
  if (seconds === undefined || seconds === null || seconds === "") return "";
  const date = new Date(Number(seconds) * 1000);
  return Number.isNaN(date.getTime()) ? String(seconds) : date.toISOString().replace(/\.\d+Z$/, "Z");  // to the second
}

/**
 * An export's progress: ``{ fraction, text, failed, done }`` from its description
 * (DescribeExport) and, while it runs, its entry of GET /_dynastore/exports/jobs.
 */
export function exportProgress(description, job) {
  const status = description.ExportStatus;
  if (status === "COMPLETED") {
    return { fraction: 1, done: true, failed: false,
      text: `COMPLETED: ${count(description.ItemCount)} ${Number(description.ItemCount) === 1 ? "item" : "items"}, ${formatBytesText(description.BilledSizeBytes)}` };
  }
  if (status === "FAILED") {
    return { fraction: 0, done: true, failed: true,
      text: `FAILED: ${description.FailureCode || "Unknown"}: ${description.FailureMessage || "no reason given"}` };
  }
  if (!job) return { fraction: 0, done: false, failed: false, text: `${status}: starting…` };
  const totalItems = Number(job.TotalItems) || 0;
  const fraction = totalItems ? Math.min(1, (Number(job.Items) || 0) / totalItems) : 0;
  const of = totalItems ? ` of ${count(totalItems)}` : "";
  return { fraction, done: false, failed: false,
    text: `${status}: ${count(job.Items)}${of} items, ${formatBytesText(job.Bytes)}${job.TotalBytes ? ` of ${formatBytesText(job.TotalBytes)}` : ""}` };
}

/**
 * ImportTable's request from the page's form (throws on a field at fault): the source
 * bucket and prefix, format and compression, CSV options, and the new table.
 */
export function importRequest({ bucket, prefix, format = "DYNAMODB_JSON", compression = "NONE", delimiter = ",", header = "", tableName, hashName, hashType = "S", rangeName = "", rangeType = "S", billing = "PAY_PER_REQUEST", readUnits = 5, writeUnits = 5 }) {
  if (!IMPORT_FORMATS.includes(format)) throw new Error(`Unknown input format ${format}`);
  if (!COMPRESSIONS.includes(compression)) throw new Error(`Unknown compression ${compression}`);
  const name = String(tableName || "").trim();
  if (!TABLE_NAME.test(name)) throw new Error("The new table needs a name of 3 to 255 letters, digits, '_', '-' or '.'");
  const hash = String(hashName || "").trim();
  if (!hash) throw new Error("The new table needs a partition key");
  const keySchema = [{ AttributeName: hash, KeyType: "HASH" }];
  const definitions = [{ AttributeName: hash, AttributeType: hashType }];
  const range = String(rangeName || "").trim();
  if (range) {
    if (range === hash) throw new Error("The sort key must differ from the partition key");
    keySchema.push({ AttributeName: range, KeyType: "RANGE" });
    definitions.push({ AttributeName: range, AttributeType: rangeType });
  }
  const table = { TableName: name, KeySchema: keySchema, AttributeDefinitions: definitions, BillingMode: billing };
  if (billing === "PROVISIONED") {
    const units = (value, label) => {
      const number = Number(value);
      if (!Number.isInteger(number) || number < 1) throw new Error(`${label} must be a whole number of at least 1`);
      return number;
    };
    table.ProvisionedThroughput = { ReadCapacityUnits: units(readUnits, "Read capacity"), WriteCapacityUnits: units(writeUnits, "Write capacity") };
  }
  const source = { S3Bucket: checkBucket(bucket) };
  const cleaned = String(prefix || "").trim().replace(/^\/+/, "");
  if (cleaned) source.S3KeyPrefix = cleaned;
  const request = { S3BucketSource: source, InputFormat: format, InputCompressionType: compression, TableCreationParameters: table };
  if (format === "CSV") {
    const csv = {};
    if (delimiter && delimiter !== ",") {
      if (delimiter.length !== 1) throw new Error("The CSV delimiter is one character");
      csv.Delimiter = delimiter;
    }
    const names = String(header || "").split(",").map((part) => part.trim()).filter(Boolean);
    if (names.length) csv.HeaderList = names;
    if (Object.keys(csv).length) request.InputFormatOptions = { Csv: csv };
  }
  return request;
}

/**
 * An import's progress: ``{ fraction, text, failed, done, errors }`` from DescribeImport's
 * ImportTableDescription and its entry of GET /_dynastore/backups/imports (bytes read,
 * objects, the first errors logged).
 */
export function importProgress(description, entry) {
  const status = description.ImportStatus;
  const errors = Number(description.ErrorCount ?? entry?.Errors ?? 0);
  const samples = (entry && entry.ErrorSamples) || [];
  const imported = description.ImportedItemCount ?? entry?.ImportedItems ?? 0;
  const processed = description.ProcessedItemCount ?? entry?.Items ?? 0;
  const bytes = entry?.Bytes ?? description.ProcessedSizeBytes ?? 0;
  const errorText = errors ? `, ${count(errors)} error${errors === 1 ? "" : "s"}` : "";
  if (status === "COMPLETED") {
    return { fraction: 1, done: true, failed: false, errors, samples,
      text: `COMPLETED: ${count(imported)} items imported of ${count(processed)} read${errorText}` };
  }
  if (status === "FAILED" || status === "CANCELLED") {
    return { fraction: 0, done: true, failed: true, errors, samples,
      text: `${status}: ${description.FailureCode || "Unknown"}: ${description.FailureMessage || "no reason given"}${errorText}` };
  }
  const total = Number(entry?.TotalBytes) || 0;
  const fraction = total ? Math.min(1, (Number(bytes) || 0) / total) : 0;
  return { fraction, done: false, failed: false, errors, samples,
    text: `${status}: ${count(processed)} items read, ${formatBytesText(bytes)}${total ? ` of ${formatBytesText(total)}` : ""}${errorText}` };
}

/** One logged import error as a line (the route gives objects or texts). */
export function errorLine(sample) {
  if (typeof sample === "string") return sample;
  if (!sample || typeof sample !== "object") return String(sample);
  const where = [sample.Object || sample.object, sample.Line ?? sample.line].filter((part) => part !== undefined && part !== null).join(":");
  const message = sample.Message || sample.message || sample.Error || sample.error;
  return message ? `${where ? `${where}: ` : ""}${message}` : JSON.stringify(sample);
}

/** The PITR status of a DescribeContinuousBackups answer ("ENABLED" / "DISABLED"). */
export function pitrStatus(answer) {
  return answer?.ContinuousBackupsDescription?.PointInTimeRecoveryDescription?.PointInTimeRecoveryStatus || "DISABLED";
}

/** True when a file may be imported from the browser (config.json's ``fileImportMaxBytes``). */
export function fileFits(size, maxBytes) { return Number(size) <= Number(maxBytes); }
