// Package results writes where a job's output goes when an attempt ends:
// the job's result_location (seed 003's "result location", a URL).
//
// # What is written
//
// For every attempt of a job with a result location that ends (succeeded,
// failed, timed out, cancelled or lost), three objects go under
// <location>/<job id>/attempt-<n>/:
//
//	stdout.log   the attempt's standard output, as the server kept it
//	stderr.log   its standard error
//	result.json  the job, the attempt's outcome, exit code, times, sizes
//	             and, on the job's last attempt, the handler's result
//
// result.json is written last, so its presence says the other two are
// complete. Writing the same attempt again overwrites the objects with the
// same content: a try that is repeated after a crash does no harm.
//
// Locations are opened with gocloud.dev/blob: file:///a/directory (created
// when missing) and s3://bucket/optional/prefix?region=...&endpoint=...
// (credentials from the server's environment, the AWS SDK's default
// chain; endpoint and use_path_style reach S3-compatible stores).
//
// # Durability and retries
//
// The dispatcher marks an ended attempt's upload pending on its execution
// in the same transaction that records the attempt's end, so an upload is
// never forgotten: not on a crash, not by retention (a job whose upload is
// pending is kept). The Uploader is a background service: it reads the
// due uploads from the store, writes them, and reports each try to a
// Recorder (the dispatcher, the store's one writer), which records it on
// the execution, fenced by the try count, with an audit event. A failed
// try is retried with exponential back-off (Backoff doubling up to
// MaxBackoff) until MaxTries, after which the upload is recorded as failed
// with its last error: visible on the execution and in the audit trail,
// never dropped silently.
package results
