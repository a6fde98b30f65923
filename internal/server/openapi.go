package server

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// route describes one endpoint for the OpenAPI document.
type route struct {
	method, path, summary string
	request, response     any // zero values of the body types; nil = none
}

var openapiRoutes = []route{
	{"POST", "/jobs", "Submit a job (wait=true: on-demand, answer when it ends)", api.JobSpec{}, api.SubmitResponse{}},
	{"POST", "/jobs/batch", "Submit up to 1000 jobs atomically", api.BatchRequest{}, api.BatchResponse{}},
	{"GET", "/jobs", "List jobs, newest first, with filters and a cursor", nil, api.JobList{}},
	{"GET", "/jobs/{id}", "Get a job and its latest execution", nil, api.JobResponse{}},
	{"DELETE", "/jobs/{id}", "Cancel a job", nil, api.ActionResponse{}},
	{"POST", "/jobs/{id}/cancel", "Cancel a job", nil, api.ActionResponse{}},
	{"POST", "/jobs/{id}/reprioritize", "Change a pending job's priority", api.ReprioritizeRequest{}, api.ActionResponse{}},
	{"POST", "/jobs/{id}/hold", "Set a job that has not started aside: never leased until released", nil, api.ActionResponse{}},
	{"POST", "/jobs/{id}/release", "Make a held job runnable again", nil, api.ActionResponse{}},
	{"POST", "/jobs/{id}/retry", "Send a failed or cancelled job back to the queue with one more attempt", nil, api.ActionResponse{}},
	{"POST", "/jobs/retry", "Retry failed or cancelled jobs, named or matched by type, failure class, tenant and lane", api.RetryRequest{}, api.RetryResponse{}},
	{"POST", "/jobs/{id}/extend-sla", "Extend a job's max and expected time", api.ExtendSLARequest{}, api.JobResponse{}},
	{"GET", "/jobs/{id}/executions", "A job's attempts, oldest first (limit, cursor)", nil, api.ExecutionList{}},
	{"GET", "/jobs/{id}/events", "A job's audit trail", nil, api.EventList{}},
	{"GET", "/jobs/{id}/logs", "A job's output (follow=true: Server-Sent Events)", nil, api.LogList{}},
	{"GET", "/jobs/{id}/explain", "Why a job is not running", nil, api.Explanation{}},
	{"GET", "/failures", "Failed executions by outcome and class, most recent first", nil, api.FailureReport{}},
	{"GET", "/jobs/{id}/failures", "A job's failed attempts", nil, api.FailureReport{}},
	{"GET", "/jobs/{id}/successes", "A job's succeeded attempts", nil, api.SuccessReport{}},
	{"GET", "/jobs/{id}/sla-compliance", "A job's SLA compliance", nil, api.SLAReport{}},
	{"GET", "/schedules/{id}/failures", "A schedule's failed runs", nil, api.FailureReport{}},
	{"GET", "/schedules/{id}/successes", "A schedule's succeeded runs, run-time percentiles", nil, api.SuccessReport{}},
	{"GET", "/schedules/{id}/sla-compliance", "A schedule's SLA compliance", nil, api.SLAReport{}},
	{"GET", "/successes", "Succeeded executions with run-time percentiles", nil, api.SuccessReport{}},
	{"GET", "/sla-compliance", "SLA compliance report", nil, api.SLAReport{}},
	{"GET", "/usage", "Per tenant or lane (by), what the attempts finished in [since, until) used: requested core-, GPU- and memory-GB-seconds, measured CPU and peak memory (default the last 24 hours by tenant)", nil, api.UsageReport{}},
	{"GET", "/series", "Attempts finished by outcome and waits per step, over a range (default the last hour by minute)", nil, api.Series{}},
	{"POST", "/schedules", "Create a schedule: a job template and when to run it", api.ScheduleSpec{}, api.Schedule{}},
	{"GET", "/schedules", "List schedules, by id, with a cursor", nil, api.ScheduleList{}},
	{"GET", "/schedules/{id}", "Get a schedule with its next 10 times and last 10 runs", nil, api.Schedule{}},
	{"PUT", "/schedules/{id}", "Replace a schedule's spec, template and policies", api.ScheduleSpec{}, api.Schedule{}},
	{"DELETE", "/schedules/{id}", "Delete a schedule (its unfinished jobs go on)", nil, nil},
	{"POST", "/schedules/{id}/pause", "Pause a schedule, with a note", api.ScheduleNoteRequest{}, api.Schedule{}},
	{"POST", "/schedules/{id}/resume", "Resume a schedule (missed slots meet the catch-up window)", api.ScheduleNoteRequest{}, api.Schedule{}},
	{"POST", "/schedules/{id}/trigger", "Fire a slot now, under the overlap policy", nil, api.ScheduleActionResponse{}},
	{"POST", "/schedules/{id}/backfill", "Fire the slots of a past range", api.ScheduleBackfillRequest{}, api.ScheduleActionResponse{}},
	{"GET", "/schedules/{id}/events", "A schedule's history: fired, skipped, missed and failed slots, changes", nil, api.EventList{}},
	{"GET", "/events", "The audit trail: every event (admin) or the tenant's own, filtered by type, job, schedule, actor and time, oldest first", nil, api.EventList{}},
	{"POST", "/webhooks", "Register an alert webhook (admin)", api.WebhookRequest{}, nil},
	{"GET", "/webhooks", "The alert webhooks, configured and registered, without secrets (admin)", nil, api.WebhookList{}},
	{"DELETE", "/webhooks/{name}", "Remove a registered alert webhook (admin)", nil, nil},
	{"POST", "/keys", "Create an API key (admin); its secret is in this answer only", api.KeyRequest{}, api.KeyCreated{}},
	{"GET", "/keys", "List the stored API keys, without secrets (admin)", nil, api.KeyList{}},
	{"DELETE", "/keys/{id}", "Revoke a stored API key at once, on every instance (admin)", nil, nil},
	{"GET", "/tenants", "Each tenant's pending and running jobs against its max_running and max_queued (a tenant key: its own)", nil, api.TenantList{}},
	{"GET", "/lanes", "Lanes and their dominant shares", nil, api.LaneList{}},
	{"POST", "/lanes/{name}/pause", "Pause a lane: it leases nothing until resumed; running jobs finish (admin)", api.PauseLaneRequest{}, api.LaneActionResponse{}},
	{"POST", "/lanes/{name}/resume", "Resume a paused lane (admin)", nil, api.LaneActionResponse{}},
	{"GET", "/workers", "Registered workers", nil, api.WorkerList{}},
	{"POST", "/workers/register", "Register a worker", api.RegisterRequest{}, api.RegisterResponse{}},
	{"POST", "/workers/{id}/lease", "Long-poll for leases", api.LeaseRequest{}, api.LeaseResponse{}},
	{"POST", "/workers/{id}/start", "Report attempts started", api.StartRequest{}, api.ItemResults{}},
	{"POST", "/workers/{id}/heartbeat", "Keep leases alive; learn of cancels", api.HeartbeatRequest{}, api.HeartbeatResponse{}},
	{"POST", "/workers/{id}/complete", "Report attempts ended", api.CompleteRequest{}, api.ItemResults{}},
	{"POST", "/workers/{id}/logs", "Append log chunks", api.LogAppendRequest{}, api.LogAppendResponse{}},
	{"POST", "/workers/{id}/deregister", "Leave; held leases are released", nil, nil},
}

var (
	openapiOnce sync.Once
	openapiDoc  []byte
)

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	openapiOnce.Do(func() { openapiDoc, _ = json.MarshalIndent(buildOpenAPI(), "", "  ") })
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openapiDoc)
}

// buildOpenAPI derives the document from the route table and the wire
// types, so it cannot drift from what the handlers decode and encode.
func buildOpenAPI() map[string]any {
	schemas := map[string]any{}
	paths := map[string]map[string]any{}
	for _, rt := range openapiRoutes {
		op := map[string]any{"summary": rt.summary, "responses": responses(rt, schemas)}
		if strings.Contains(rt.path, "{id}") {
			op["parameters"] = []any{map[string]any{"name": "id", "in": "path", "required": true, "schema": map[string]string{"type": "string"}}}
		}
		if rt.request != nil {
			op["requestBody"] = map[string]any{"required": true, "content": jsonContent(schemaRef(reflect.TypeOf(rt.request), schemas))}
		}
		p := "/api/v1" + rt.path
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		paths[p][strings.ToLower(rt.method)] = op
	}
	schemaRef(reflect.TypeOf(api.ErrorResponse{}), schemas)
	return map[string]any{
		"openapi": "3.1.0",
		"info":    map[string]string{"title": "fairway", "version": "v1", "description": "Priority job scheduler API; see docs/api.md."},
		"paths":   paths,
		"components": map[string]any{
			"schemas":         schemas,
			"securitySchemes": map[string]any{"bearer": map[string]string{"type": "http", "scheme": "bearer"}},
		},
		"security": []any{map[string]any{"bearer": []string{}}},
	}
}

func responses(rt route, schemas map[string]any) map[string]any {
	errRef := jsonContent(map[string]string{"$ref": "#/components/schemas/ErrorResponse"})
	ok := map[string]any{"description": "OK"}
	if rt.response != nil {
		ok["content"] = jsonContent(schemaRef(reflect.TypeOf(rt.response), schemas))
	}
	return map[string]any{"200": ok, "4XX": map[string]any{"description": "client error", "content": errRef}, "5XX": map[string]any{"description": "server error", "content": errRef}}
}

func jsonContent(schema any) map[string]any {
	return map[string]any{"application/json": map[string]any{"schema": schema}}
}

var timeType = reflect.TypeOf(time.Time{})
var rawType = reflect.TypeOf(json.RawMessage{})

// schemaRef returns a JSON Schema for t, registering named structs in
// schemas and referring to them.
func schemaRef(t reflect.Type, schemas map[string]any) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return map[string]string{"type": "string", "format": "date-time"}
	case t == rawType:
		return map[string]any{}
	}
	switch t.Kind() {
	case reflect.Struct:
		if _, ok := schemas[t.Name()]; !ok {
			schemas[t.Name()] = map[string]any{} // break cycles
			schemas[t.Name()] = structSchema(t, schemas)
		}
		return map[string]string{"$ref": "#/components/schemas/" + t.Name()}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": schemaRef(t.Elem(), schemas)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaRef(t.Elem(), schemas)}
	case reflect.String:
		return map[string]string{"type": "string"}
	case reflect.Bool:
		return map[string]string{"type": "boolean"}
	case reflect.Float32, reflect.Float64:
		return map[string]string{"type": "number"}
	}
	return map[string]string{"type": "integer"}
}

func structSchema(t reflect.Type, schemas map[string]any) map[string]any {
	props := map[string]any{}
	var required []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			if sub, ok := structSchema(f.Type, schemas)["properties"].(map[string]any); ok {
				for k, v := range sub {
					props[k] = v
				}
			}
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = schemaRef(f.Type, schemas)
		if !strings.Contains(opts, "omitempty") && f.Type.Kind() != reflect.Pointer {
			required = append(required, name)
		}
	}
	out := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}
