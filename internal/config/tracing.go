package config

import (
	"fmt"
	"net/url"
)

// Tracing turns on OpenTelemetry traces of jobs (package tracing): spans
// for submit, wait, lease and run, exported with OTLP over HTTP. Off
// unless an endpoint is set here or in the standard environment
// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT).
type Tracing struct {
	// Endpoint is the OTLP/HTTP traces URL, e.g.
	// http://127.0.0.1:4318/v1/traces (a URL without a path gets
	// /v1/traces).
	Endpoint string `yaml:"endpoint"`
	// ServiceName names this server in the traces (default "fairway").
	ServiceName string `yaml:"service_name"`
	// Headers are sent with every export (e.g. an API key of the collector).
	Headers map[string]string `yaml:"headers"`
}

// validate checks the endpoint's form.
func (t Tracing) validate() error {
	if t.Endpoint == "" {
		return nil
	}
	u, err := url.Parse(t.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalid("tracing.endpoint", fmt.Sprintf("must be an http:// or https:// URL of an OTLP/HTTP collector, got %q", t.Endpoint))
	}
	return nil
}
