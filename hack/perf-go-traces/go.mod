module kubecrew/hack/perf-go-traces

go 1.26
