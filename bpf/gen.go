package bpf

// The generated objects are committed so that building needs no clang.
// Regenerate with `go generate ./bpf` (clang, llvm-strip and libbpf headers).
//
//go:generate go tool bpf2go -tags linux -target bpfel,bpfeb xdpRedirect xdp_redirect.c -- -O2 -Wall -Werror -I/usr/include/x86_64-linux-gnu
//go:generate go tool bpf2go -tags linux -target bpfel,bpfeb tcClassify tc_classify.c -- -O2 -Wall -Werror -I/usr/include/x86_64-linux-gnu
