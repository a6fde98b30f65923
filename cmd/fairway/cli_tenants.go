package main

import (
	"context"
	"io"
	"strconv"

	"github.com/fairwayhq/fairway/api"
)

func init() {
	commands["tenants"] = command{summary: "show each tenant's jobs against its limits and quota", run: runTenants}
}

const tenantsAbout = `Shows each tenant: its pending and running jobs against max_running and
max_queued (0: no limit), and the cpu (cores), memory and GPUs its running
jobs hold against its quota (tenants.NAME.quota; "-": no limit). A tenant
key sees its own tenant only.`

func runTenants(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("tenants", "[flags]", tenantsAbout, stdout, stderr)
	if _, code := c.parseN(args, 0, "no arguments"); code >= 0 {
		return code
	}
	cl, code := c.client()
	if code >= 0 {
		return code
	}
	tenants, err := cl.Tenants(ctx)
	if err != nil {
		return c.fail(err)
	}
	if c.json {
		return c.done(c.printJSON(api.TenantList{Tenants: emptyIfNil(tenants)}))
	}
	tw := c.table()
	tableRow(tw, "TENANT", "PENDING", "RUNNING", "MAX_RUNNING", "MAX_QUEUED", "CPU", "MEM_MB", "GPU")
	for _, t := range tenants {
		q := t.Quota
		if q == nil {
			q = &api.Quota{}
		}
		tableRow(tw, t.Name, strconv.Itoa(t.Pending), strconv.Itoa(t.Running), strconv.Itoa(t.MaxRunning), strconv.Itoa(t.MaxQueued),
			floatText(t.Held.CPU)+" of "+quotaFloat(q.CPU), strconv.FormatInt(t.Held.MemoryMB, 10)+" of "+quotaInt(q.MemoryMB),
			strconv.FormatInt(t.Held.GPU, 10)+" of "+quotaInt(q.GPU))
	}
	return c.done(tw.Flush())
}

func quotaFloat(v *float64) string {
	if v == nil {
		return "-"
	}
	return floatText(*v)
}

func quotaInt(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}
