package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Store is the S3 endpoint of the pipeline root, with the namespace's credentials.
type Store struct {
	endpoint    string
	accessKeyID string
	client      *minio.Client
}

// errNotFound: nothing at a URI
var errNotFound = errors.New("not found")

// NewStore connects to SKIFF_S3_ENDPOINT (http://host:port or https://host), path-style.
func NewStore(endpoint, region, accessKeyID, secret string) (*Store, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, fmt.Errorf("SKIFF_S3_ENDPOINT: %q is not an http:// or https:// URL of an S3 endpoint (http://host:port)", endpoint)
	}
	c, err := minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(accessKeyID, secret, ""),
		Secure:       u.Scheme == "https",
		Region:       region,
		BucketLookup: minio.BucketLookupPath,
		MaxRetries:   5,
	})
	if err != nil {
		return nil, fmt.Errorf("SKIFF_S3_ENDPOINT %s: %v", endpoint, err)
	}
	return &Store{endpoint: strings.TrimSuffix(endpoint, "/"), accessKeyID: accessKeyID, client: c}, nil
}

// describe says what a failed request means: refused credentials and an unreachable endpoint plainly.
func (s *Store) describe(err error) string {
	var r minio.ErrorResponse
	if errors.As(err, &r) && r.Code != "" {
		switch r.Code {
		case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken", "ExpiredToken":
			return fmt.Sprintf("the S3 endpoint %s refused the credentials of access key id %q (%s)", s.endpoint, s.accessKeyID, r.Code)
		}
		return fmt.Sprintf("%s: %s", r.Code, r.Message)
	}
	var ne net.Error
	var ue *url.Error
	if errors.As(err, &ne) || errors.As(err, &ue) {
		return fmt.Sprintf("the S3 endpoint %s cannot be reached: %v", s.endpoint, err)
	}
	return err.Error()
}

func notFound(err error) bool {
	code := minio.ToErrorResponse(err).Code
	return code == "NoSuchKey" || code == "NoSuchBucket" || code == "NotFound"
}

// CheckBucket fails unless the bucket exists and the credentials are taken.
func (s *Store) CheckBucket(ctx context.Context, bucket string) error {
	ok, err := s.client.BucketExists(ctx, bucket)
	if err != nil {
		return fmt.Errorf("checking the bucket %s: %s", bucket, s.describe(err))
	}
	if !ok {
		return fmt.Errorf("the bucket %s does not exist at S3 endpoint %s", bucket, s.endpoint)
	}
	return nil
}

// Download copies the objects under the prefix `key/` to `dest/<rel>`, or, when there are none, the
// object `key` to the file `dest`; errNotFound when neither is there. Returns how many objects it copied.
func (s *Store) Download(ctx context.Context, uri, dest string) (int, error) {
	loc, ok := ParseS3URI(uri)
	if !ok {
		return 0, fmt.Errorf("%s is not an s3:// or minio:// URI", uri)
	}
	prefix := ""
	if loc.Key != "" {
		prefix = loc.Key + "/"
	}
	var keys []string
	for o := range s.client.ListObjects(ctx, loc.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			if notFound(o.Err) {
				break
			}
			return 0, fmt.Errorf("listing %s: %s", uri, s.describe(o.Err))
		}
		if !strings.HasSuffix(o.Key, "/") {
			keys = append(keys, o.Key)
		}
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		if loc.Key == "" {
			return 0, errNotFound
		}
		if _, err := s.client.StatObject(ctx, loc.Bucket, loc.Key, minio.StatObjectOptions{}); err != nil {
			if notFound(err) {
				return 0, errNotFound
			}
			return 0, fmt.Errorf("reading %s: %s", uri, s.describe(err))
		}
		return 1, s.getFile(ctx, loc.Bucket, loc.Key, dest)
	}
	for _, k := range keys {
		target := filepath.Join(append([]string{dest}, SafeSegments(k[len(prefix):])...)...)
		if err := s.getFile(ctx, loc.Bucket, k, target); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

// getFile writes one object to a file, through a temporary file beside it.
func (s *Store) getFile(ctx context.Context, bucket, key, dest string) error {
	what := fmt.Sprintf("reading s3://%s/%s", bucket, key)
	obj, err := s.client.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return fmt.Errorf("%s: %s", what, s.describe(err))
	}
	defer obj.Close()
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dest), ".skiff-launcher-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, obj); err != nil {
		tmp.Close()
		var r minio.ErrorResponse
		if errors.As(err, &r) {
			return fmt.Errorf("%s: %s", what, s.describe(err))
		}
		return fmt.Errorf("%s into %s: %v", what, dest, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dest)
}

// Upload copies the file `src` to the object at uri, or every file under the directory `src` to
// `uri/<rel>`; nothing at `src` is nothing uploaded. Returns how many objects it wrote.
func (s *Store) Upload(ctx context.Context, src, uri string) (int, error) {
	loc, ok := ParseS3URI(uri)
	if !ok {
		return 0, fmt.Errorf("%s is not an s3:// or minio:// URI", uri)
	}
	st, err := os.Stat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if !st.IsDir() {
		if loc.Key == "" {
			return 0, fmt.Errorf("the target names a bucket, not an object")
		}
		return 1, s.putFile(ctx, src, loc.Bucket, loc.Key)
	}
	type file struct{ path, rel string }
	var files []file
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			// a link to a file is uploaded as the file; a link to a folder or to nothing is left out
			t, err := os.Stat(p)
			if err != nil || t.IsDir() {
				return nil
			}
		} else if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		files = append(files, file{p, filepath.ToSlash(rel)})
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, f := range files {
		key := path.Join(append([]string{loc.Key}, SafeSegments(f.rel)...)...)
		if key == "" {
			return 0, fmt.Errorf("the target names a bucket, not an object")
		}
		if err := s.putFile(ctx, f.path, loc.Bucket, key); err != nil {
			return 0, err
		}
	}
	return len(files), nil
}

func (s *Store) putFile(ctx context.Context, src, bucket, key string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if _, err := s.client.PutObject(ctx, bucket, key, f, st.Size(), minio.PutObjectOptions{ContentType: "application/octet-stream"}); err != nil {
		return fmt.Errorf("writing s3://%s/%s: %s", bucket, key, s.describe(err))
	}
	return nil
}
