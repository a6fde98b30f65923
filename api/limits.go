package api

import "time"

// RateLimitBlock is what an explanation with code rate_limited carries:
// the limit whose bucket is empty and when its next token comes.
type RateLimitBlock struct {
	Limit     string    `json:"limit"`
	By        string    `json:"by,omitempty"`    // type, lane, tenant, key, label:NAME; "" for one bucket
	Value     string    `json:"value,omitempty"` // the bucket's value of by
	Rate      int64     `json:"rate"`
	Per       string    `json:"per"` // a Go duration: "1m0s"
	Burst     int64     `json:"burst"`
	NextToken time.Time `json:"next_token"`
}

// QuotaBlock is what an explanation with code tenant_quota carries: the
// first resource the tenant's quota lacks, what its running jobs hold of
// it, the limit and what the job asks (cpu in cores).
type QuotaBlock struct {
	Tenant   string  `json:"tenant"`
	Resource string  `json:"resource"` // cpu, memory_mb or gpu
	Used     float64 `json:"used"`
	Limit    float64 `json:"limit"`
	Need     float64 `json:"need"`
}

// Quota is a tenant's resource quota: what its running jobs may hold
// together. An absent field is no limit; cpu is in cores.
type Quota struct {
	CPU      *float64 `json:"cpu,omitempty"`
	MemoryMB *int64   `json:"memory_mb,omitempty"`
	GPU      *int64   `json:"gpu,omitempty"`
}

// RateLimitInfo is a rate limit as GET /lanes lists it, with its buckets
// that are not full (a bucket not listed is full).
type RateLimitInfo struct {
	Name  string `json:"name"`
	Type  string `json:"type,omitempty"` // match; "" any
	Lane  string `json:"lane,omitempty"` // match; "" any
	By    string `json:"by,omitempty"`
	Rate  int64  `json:"rate"`
	Per   string `json:"per"`
	Burst int64  `json:"burst"`
	// Buckets are the emptiest buckets, at most 100; BucketsNotFull
	// counts them all.
	Buckets        []RateBucket `json:"buckets"`
	BucketsNotFull int          `json:"buckets_not_full"`
}

// RateBucket is one bucket's level: whole and partial tokens, and when
// the next whole token comes.
type RateBucket struct {
	Value     string    `json:"value,omitempty"`
	Tokens    float64   `json:"tokens"`
	NextToken time.Time `json:"next_token"`
}
