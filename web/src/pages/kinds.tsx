// Every kind the server serves, each linking to its list: the way to any object without a page of its own.
import { useApi } from '../api/context';
import { apiVersionOf } from '../api/kinds';
import { Link } from '../app/nav';
import { href } from '../app/router';
import { DataTable } from '../components/DataTable';

export function AllKinds({ namespace }: { namespace?: string }) {
  const { kinds } = useApi();
  const rows = kinds.all.filter((k) => k.verbs.includes('list') && !k.plural.includes('/'));
  return (
    <section className="page">
      <header className="listhead">
        <h1>All kinds</h1>
      </header>
      <DataTable
        label="kinds"
        rows={rows}
        rowKey={(k) => `${k.group}/${k.plural}`}
        rowHref={(k) => (k.namespaced ? href({ namespace, plural: k.plural }) : href({ cluster: true, plural: k.plural }))}
        initialSort={[{ id: 'kind', desc: false }]}
        columns={[
          { id: 'kind', header: 'Kind', value: (k) => k.kind, cell: (k) => <Link to={k.namespaced ? href({ namespace, plural: k.plural }) : href({ cluster: true, plural: k.plural })}>{k.kind}</Link> },
          { id: 'plural', header: 'Resource', value: (k) => k.plural, cell: (k) => k.plural },
          { id: 'apiVersion', header: 'API version', value: (k) => apiVersionOf(k), cell: (k) => apiVersionOf(k) },
          { id: 'scope', header: 'Scope', width: 110, value: (k) => (k.namespaced ? 'Namespaced' : 'Cluster'), cell: (k) => (k.namespaced ? 'Namespaced' : 'Cluster') },
        ]}
      />
    </section>
  );
}
