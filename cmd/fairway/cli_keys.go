package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/fairwayhq/fairway/api"
)

func init() {
	commands["keys"] = command{summary: "create, list and revoke API keys (admin)", run: runKeys}
}

const keysAbout = `Manages the API keys kept in the store (admin keys):

  fairway keys create --role tenant --tenant NAME [--name TEXT] [--expires-in DURATION]
  fairway keys create --role worker|admin [--name TEXT] [--expires-in DURATION]
  fairway keys list [--tenant NAME]
  fairway keys revoke ID

The secret is printed once, by create, alone on stdout (so that
k=$(fairway keys create ...) holds just the key); the key's id goes to
stderr. Only its hash is stored. On a server in open mode (no keys
configured, as fairway dev), create warns that keys are not enforced. A revoked
or expired key is refused from its next request on, on every instance.
Keys in the configuration file keep working; they are revoked by removing
them there.`

func runKeys(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runVerbs(ctx, "keys", "create|list|revoke ...", keysAbout,
		map[string]verbFunc{"create": keysCreate, "list": keysList, "revoke": keysRevoke}, args, stdout, stderr)
}

func keysCreate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("keys create", "--role ROLE [flags]", keysAbout, stdout, stderr)
	var req api.KeyRequest
	var expiresIn time.Duration
	c.fs.StringVar(&req.Role, "role", "", "tenant, worker or admin")
	c.fs.StringVar(&req.Tenant, "tenant", "", "the tenant of a tenant key")
	c.fs.StringVar(&req.Name, "name", "", "what the key is for")
	c.fs.DurationVar(&expiresIn, "expires-in", 0, "the key expires this long from now (default: never)")
	if _, code := c.parseN(args, 0, "no arguments"); code >= 0 {
		return code
	}
	if req.Role == "" {
		return c.usageErr("--role is required: tenant, worker or admin")
	}
	if expiresIn < 0 {
		return c.usageErr("--expires-in: want a positive duration, got %s", expiresIn)
	}
	if expiresIn > 0 {
		at := time.Now().Add(expiresIn)
		req.ExpiresAt = &at
	}
	cl, code := c.client()
	if code >= 0 {
		return code
	}
	r, err := cl.CreateKey(ctx, req)
	if err != nil {
		return c.fail(err)
	}
	if c.json {
		err = c.printJSON(r)
	} else {
		// The secret alone on stdout, so that k=$(fairway keys create ...)
		// holds just the key; the rest on stderr.
		if _, err = fmt.Fprintln(c.stdout, r.Secret); err == nil {
			fmt.Fprintf(c.stderr, "key %s (%s) created; its secret, printed on stdout, is shown this once: keep it now\n", r.Key.ID, keyRoleText(r.Key))
		}
	}
	c.warnIfOpen(r.Key)
	return c.done(err)
}

// warnIfOpen warns when k was created by a server in open mode, where no
// key is checked.
func (c *cli) warnIfOpen(k api.Key) {
	if k.CreatedBy == openActor {
		fmt.Fprintf(c.stderr, "fairway: warning: %s runs in open mode (no API keys configured): keys are stored but not enforced; every request acts as admin\n", c.server)
	}
}

func keysList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("keys list", "[--tenant NAME]", keysAbout, stdout, stderr)
	var tenant string
	tenants := c.filter("tenant", "only the keys of this `tenant` (one)")
	if _, code := c.parseN(args, 0, "no arguments"); code >= 0 {
		return code
	}
	if err := singles(map[*filterFlag]*string{tenants: &tenant}); err != nil {
		return c.usageErr("%v", err)
	}
	cl, code := c.client()
	if code >= 0 {
		return code
	}
	r, err := cl.Keys(ctx, tenant)
	if err != nil {
		return c.fail(err)
	}
	if c.json {
		r.Keys = emptyIfNil(r.Keys)
		return c.done(c.printJSON(r))
	}
	tw := c.table()
	tableRow(tw, "ID", "ROLE", "TENANT", "NAME", "CREATED", "BY", "EXPIRES")
	for _, k := range r.Keys {
		expires := timeText(k.ExpiresAt)
		if k.Expired {
			expires += " (expired)"
		}
		tableRow(tw, k.ID, k.Role, dashIfEmpty(k.Tenant), dashIfEmpty(k.Name), timeText(&k.CreatedAt), dashIfEmpty(k.CreatedBy), expires)
	}
	return c.done(tw.Flush())
}

func keysRevoke(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("keys revoke", "ID", keysAbout, stdout, stderr)
	pos, code := c.parseN(args, 1, "one key ID")
	if code >= 0 {
		return code
	}
	cl, code := c.client()
	if code >= 0 {
		return code
	}
	if err := cl.RevokeKey(ctx, pos[0]); err != nil {
		return c.fail(err)
	}
	_, err := fmt.Fprintf(c.stdout, "key %s revoked: it is refused from its next request on\n", pos[0])
	return c.done(err)
}

// openActor is the actor a server without keys (open mode, fairway dev)
// records: the created_by of a key it creates (docs/api.md, GET /events).
const openActor = "open"

func keyRoleText(k api.Key) string {
	if k.Tenant != "" {
		return k.Role + " of " + k.Tenant
	}
	return k.Role
}
