package scale

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// everyOne counts the objects of one kind seen matching, as a watch sees them: it lists them,
// marks those that match, and watches from the list's resourceVersion. An object once seen
// matching stays counted. A watch the API server closes (it drops watchers that fall behind)
// is listed and watched again.
type everyOne struct {
	c       client.WithWatch
	newList func() client.ObjectList
	matches func(client.Object) bool
	opts    []client.ListOption
	seen    map[client.ObjectKey]bool
	watcher watch.Interface
}

// watchEvery starts counting the objects newList's kind holds (opts select them) that
// matches accepts; stop ends the watch.
func watchEvery(ctx context.Context, c client.WithWatch, newList func() client.ObjectList, matches func(client.Object) bool, opts ...client.ListOption) (*everyOne, error) {
	e := &everyOne{c: c, newList: newList, matches: matches, opts: opts, seen: map[client.ObjectKey]bool{}}
	return e, e.listAndWatch(ctx)
}

func (e *everyOne) listAndWatch(ctx context.Context) error {
	list := e.newList()
	if err := e.c.List(ctx, list, e.opts...); err != nil {
		return err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	for _, item := range items {
		e.see(item)
	}
	raw := &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.GetResourceVersion()}}
	e.watcher, err = e.c.Watch(ctx, e.newList(), append(e.opts, raw)...)
	return err
}

func (e *everyOne) see(o any) {
	if obj, ok := o.(client.Object); ok && e.matches(obj) {
		e.seen[client.ObjectKeyFromObject(obj)] = true
	}
}

// wait returns once n objects were seen matching and acted, when not nil, has sent nil; it
// returns the first error acted sends, or why the count was not reached before ctx ended.
func (e *everyOne) wait(ctx context.Context, n int, acted <-chan error) error {
	waiting := acted != nil
	for len(e.seen) < n || waiting {
		select {
		case err := <-acted:
			if err != nil {
				return err
			}
			waiting, acted = false, nil
		case <-ctx.Done():
			return fmt.Errorf("%d of %d seen: %w", len(e.seen), n, ctx.Err())
		case ev, ok := <-e.watcher.ResultChan():
			switch {
			case !ok:
				if err := e.listAndWatch(ctx); err != nil {
					return fmt.Errorf("watch again with %d of %d seen: %w", len(e.seen), n, err)
				}
			case ev.Type != watch.Deleted:
				e.see(ev.Object)
			}
		}
	}
	return nil
}

// stop ends the watch.
func (e *everyOne) stop() {
	if e.watcher != nil {
		e.watcher.Stop()
	}
}
