package usageexport

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/parquet-go/parquet-go"
)

// The formats of a file export.
const (
	NDJSON  = "ndjson"
	Parquet = "parquet"
)

// Writer takes rows one at a time and writes them in a format.
type Writer interface {
	Write(*Row) error
	// Close writes what is buffered (Parquet: the last row group and the
	// footer). It does not close the underlying writer.
	Close() error
}

// NewWriter returns a writer of format to w.
func NewWriter(w io.Writer, format string) (Writer, error) {
	switch format {
	case NDJSON:
		return newNDJSON(w), nil
	case Parquet:
		return newParquet(w), nil
	}
	return nil, fmt.Errorf("unknown usage format %q (use parquet or ndjson)", format)
}

// ndjsonRow is a Row as one JSON line: the timestamp in RFC 3339 with
// milliseconds, UTC, which DuckDB and ClickHouse read as a timestamp.
type ndjsonRow struct {
	SchemaVersion         int32    `json:"schema_version"`
	Key                   string   `json:"key"`
	Agent                 string   `json:"agent"`
	Machine               string   `json:"machine"`
	Project               *string  `json:"project"`
	Session               string   `json:"session"`
	Model                 *string  `json:"model"`
	Timestamp             *string  `json:"timestamp"`
	InputTokens           int64    `json:"input_tokens"`
	OutputTokens          int64    `json:"output_tokens"`
	CacheReadTokens       int64    `json:"cache_read_tokens"`
	CacheCreationTokens   int64    `json:"cache_creation_tokens"`
	CacheCreation5mTokens int64    `json:"cache_creation_5m_tokens"`
	CacheCreation1hTokens int64    `json:"cache_creation_1h_tokens"`
	ReasoningTokens       int64    `json:"reasoning_tokens"`
	CostUSD               *float64 `json:"cost_usd"`
}

// TimeLayout is how NDJSON writes a timestamp.
const TimeLayout = "2006-01-02T15:04:05.000Z"

type ndjsonWriter struct {
	bw  *bufio.Writer
	enc *json.Encoder
	ts  string
}

func newNDJSON(w io.Writer) *ndjsonWriter {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &ndjsonWriter{bw: bw, enc: enc}
}

func (w *ndjsonWriter) Write(r *Row) error {
	o := ndjsonRow{r.SchemaVersion, r.Key, r.Agent, r.Machine, r.Project, r.Session, r.Model, nil,
		r.InputTokens, r.OutputTokens, r.CacheReadTokens, r.CacheCreationTokens,
		r.CacheCreation5mTokens, r.CacheCreation1hTokens, r.ReasoningTokens, r.CostUSD}
	if t, ok := r.Time(); ok {
		w.ts = t.Format(TimeLayout)
		o.Timestamp = &w.ts
	}
	return w.enc.Encode(&o)
}

func (w *ndjsonWriter) Close() error { return w.bw.Flush() }

// RowGroupRows is how many rows a Parquet row group holds: the writer
// buffers one row group at a time, so memory stays flat however many
// requests the store holds. It was 65,536, whose buffers (with the 256 KiB
// pages of parquet-go's default) took an export of a 3 GB store to 72 MB;
// 16,384 rows in 64 KiB pages keep it under 64 MB (scripts/bench-memory.sh)
// for a file about 4 % larger.
const RowGroupRows = 16 << 10

// pageBytes is the size of the pages a column is buffered in.
const pageBytes = 64 << 10

type parquetWriter struct {
	pw  *parquet.GenericWriter[Row]
	buf []Row
}

func newParquet(w io.Writer) *parquetWriter {
	pw := parquet.NewGenericWriter[Row](w,
		parquet.MaxRowsPerRowGroup(RowGroupRows),
		parquet.PageBufferSize(pageBytes),
		parquet.Compression(&zstdCodec{}),
		parquet.CreatedBy("sessctl", "", ""),
		parquet.KeyValueMetadata("sessctl.usage.schema_version", strconv.Itoa(SchemaVersion)))
	return &parquetWriter{pw: pw, buf: make([]Row, 0, 1024)}
}

func (w *parquetWriter) Write(r *Row) error {
	c := *r
	// the row's pointers point into the producer's reused variables
	if r.Project != nil {
		p := *r.Project
		c.Project = &p
	}
	if r.Model != nil {
		m := *r.Model
		c.Model = &m
	}
	if r.Timestamp != nil {
		t := *r.Timestamp
		c.Timestamp = &t
	}
	if r.CostUSD != nil {
		v := *r.CostUSD
		c.CostUSD = &v
	}
	w.buf = append(w.buf, c)
	if len(w.buf) == cap(w.buf) {
		return w.flush()
	}
	return nil
}

func (w *parquetWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.pw.Write(w.buf)
	clear(w.buf)
	w.buf = w.buf[:0]
	return err
}

func (w *parquetWriter) Close() error {
	if err := w.flush(); err != nil {
		return err
	}
	return w.pw.Close()
}
