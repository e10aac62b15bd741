// Package resident gives back pages of the process's own executable that
// it holds resident but may not need again.
//
// A Go executable's code, read-only data and tables (its text, rodata and
// pclntab: 31 MB for sessctl) are mapped from the file, and every page
// touched stays in the process's resident memory until it exits. sessctl
// touches 16-18 MB of them before its command does any work (package
// initialisation, and the kernel maps 64 KiB around each page fault), and
// a command that runs long touches more; its peak RSS counts them all.
// ShedExecutable drops them (madvise MADV_DONTNEED): they stay in the page
// cache, and the code that runs next maps again, by a minor fault, only
// the pages it uses.
package resident
