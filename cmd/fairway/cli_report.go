package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/client"
)

func init() {
	commands["report"] = command{summary: "reports over finished attempts: failures, successes, sla-compliance", run: runReport}
}

const reportAbout = `Reports over the attempts that finished in a time range, as the API's
/failures, /successes and /sla-compliance answer them (docs/api.md):

  fairway report failures       [--since T] [--until T] [--type T] [--tenant T]
  fairway report successes      [--since T] [--until T] [--type T] [--tenant T]
  fairway report sla-compliance [--since T] [--until T] [--type T] [--tenant T]

--since and --until take an RFC 3339 time or a duration ago (24h); a tenant
key reads its own tenant's. --json prints the API's JSON.`

var reportVerbs = map[string]verbFunc{
	"failures":       reportVerb("failures", (*client.Client).Failures),
	"successes":      reportVerb("successes", (*client.Client).Successes),
	"sla-compliance": reportVerb("sla-compliance", (*client.Client).SLACompliance),
}

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runVerbs(ctx, "report", "failures|successes|sla-compliance [flags]", reportAbout, reportVerbs, args, stdout, stderr)
}

// reportVerb is the verb that prints the report fetch reads.
func reportVerb[R any](name string, fetch func(*client.Client, context.Context, client.SummaryOptions) (R, error)) verbFunc {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		c := newCLI("report "+name, "[flags]", reportAbout, stdout, stderr)
		var since, until string
		c.fs.StringVar(&since, "since", "", "only attempts that finished at or after this `time` (RFC 3339, or a duration ago: 24h)")
		c.fs.StringVar(&until, "until", "", "only attempts that finished before this `time`")
		typ := c.filter("type", "only jobs of this `type` (one)")
		tenant := c.filter("tenant", "only jobs of this `tenant` (one; admin keys)")
		if _, code := c.parseN(args, 0, "no arguments"); code >= 0 {
			return code
		}
		var opts client.SummaryOptions
		if err := singles(map[*filterFlag]*string{typ: &opts.Type, tenant: &opts.Tenant}); err != nil {
			return c.usageErr("%v", err)
		}
		var err error
		now := time.Now()
		if opts.Since, err = sinceFlag(since, now); err != nil {
			return c.usageErr("--since: %v", err)
		}
		if opts.Until, err = sinceFlag(until, now); err != nil {
			return c.usageErr("--until: %v", err)
		}
		cl, code := c.client()
		if code >= 0 {
			return code
		}
		report, err := fetch(cl, ctx, opts)
		if err != nil {
			return c.fail(err)
		}
		if c.json {
			return c.done(c.printJSON(report))
		}
		return c.done(c.printDocument(report))
	}
}

// printDocument prints an API answer for people, whatever its fields: a
// scalar member as "name: value", an object of scalars on one line
// ("failed 2, timeout 1"), a list of objects as a table. Members keep the
// API's order; names lose their underscores; a *_ms number is shown as a
// duration and an RFC 3339 time as status shows times. So a report shows
// the fields the server sends, those added later included.
func (c *cli) printDocument(v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	doc, err := readOrdered(json.NewDecoder(bytes.NewReader(raw)))
	if err != nil {
		return err
	}
	obj, ok := doc.(orderedObject)
	if !ok {
		_, err := fmt.Fprintln(c.stdout, scalarText("", doc))
		return err
	}
	tw := c.table()
	var lists []member
	for _, m := range obj {
		switch val := m.value.(type) {
		case []any:
			lists = append(lists, m)
		case orderedObject:
			tableRow(tw, label(m.name)+":", objectLine(val))
		default:
			tableRow(tw, label(m.name)+":", scalarText(m.name, val))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, m := range lists {
		if err := c.printList(m.name, m.value.([]any)); err != nil {
			return err
		}
	}
	return nil
}

// printList prints a list member: a table of its objects (columns in the
// order their names first appear), or its values on one line.
func (c *cli) printList(name string, items []any) error {
	if len(items) == 0 {
		_, err := fmt.Fprintf(c.stdout, "%s: none\n", label(name))
		return err
	}
	var cols []string
	seen := map[string]bool{}
	for _, it := range items {
		obj, ok := it.(orderedObject)
		if !ok {
			parts := make([]string, len(items))
			for i, v := range items {
				parts[i] = scalarText(name, v)
			}
			_, err := fmt.Fprintf(c.stdout, "%s: %s\n", label(name), strings.Join(parts, ", "))
			return err
		}
		for _, m := range obj {
			if !seen[m.name] {
				seen[m.name] = true
				cols = append(cols, m.name)
			}
		}
	}
	fmt.Fprintf(c.stdout, "\n%s:\n", label(name))
	tw := c.table()
	head := make([]string, len(cols))
	for i, col := range cols {
		head[i] = strings.ToUpper(strings.TrimSuffix(col, "_ms"))
	}
	tableRow(tw, head...)
	for _, it := range items {
		obj := it.(orderedObject)
		row := make([]string, len(cols))
		for i, col := range cols {
			row[i] = "-"
			if v, ok := obj.get(col); ok {
				row[i] = dashIfEmpty(strings.ReplaceAll(valueText(col, v), "\n", " "))
			}
		}
		tableRow(tw, row...)
	}
	return tw.Flush()
}

// member is one name and value of a JSON object.
type member struct {
	name  string
	value any
}

// orderedObject is a JSON object with its members in order.
type orderedObject []member

func (o orderedObject) get(name string) (any, bool) {
	for _, m := range o {
		if m.name == name {
			return m.value, true
		}
	}
	return nil, false
}

// readOrdered reads one JSON value, objects as orderedObject, arrays as
// []any, numbers as json.Number.
func readOrdered(dec *json.Decoder) (any, error) {
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		var obj orderedObject
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := readOrdered(dec)
			if err != nil {
				return nil, err
			}
			obj = append(obj, member{key.(string), v})
		}
		_, err := dec.Token()
		return obj, err
	case json.Delim('['):
		list := []any{}
		for dec.More() {
			v, err := readOrdered(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := dec.Token()
		return list, err
	}
	return tok, nil
}

// label is a member's name for people: "by_failure_class" is "by failure
// class", and "p50_duration_ms" (shown as a duration) "p50 duration".
func label(name string) string {
	return strings.ReplaceAll(strings.TrimSuffix(name, "_ms"), "_", " ")
}

// objectLine is an object on one line: "failed 2, timeout 1", "-" when
// empty.
func objectLine(o orderedObject) string {
	parts := make([]string, 0, len(o))
	for _, m := range o {
		parts = append(parts, m.name+" "+valueText(m.name, m.value))
	}
	return dashIfEmpty(strings.Join(parts, ", "))
}

// valueText is any value on one line.
func valueText(name string, v any) string {
	switch val := v.(type) {
	case orderedObject:
		return "{" + objectLine(val) + "}"
	case []any:
		parts := make([]string, len(val))
		for i, it := range val {
			parts[i] = valueText(name, it)
		}
		return strings.Join(parts, ",")
	}
	return scalarText(name, v)
}

// scalarText shows a JSON scalar: a *_ms number as a duration, a rate or
// share as a number with three decimals, an RFC 3339 time as status shows
// times, null as "-".
func scalarText(name string, v any) string {
	switch val := v.(type) {
	case nil:
		return "-"
	case json.Number:
		if strings.HasSuffix(name, "_ms") {
			if f, err := val.Float64(); err == nil {
				return (time.Duration(f * float64(time.Millisecond))).Round(time.Millisecond).String()
			}
		}
		if strings.Contains(val.String(), ".") {
			if f, err := val.Float64(); err == nil {
				return strconv.FormatFloat(f, 'f', 3, 64)
			}
		}
		return val.String()
	case string:
		if t, err := time.Parse(time.RFC3339Nano, val); err == nil {
			return timeText(&t)
		}
		return val
	case bool:
		return strconv.FormatBool(val)
	}
	return fmt.Sprint(v)
}
