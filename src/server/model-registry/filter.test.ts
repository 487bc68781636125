import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { filterableOf, readBody, RegisteredModel, ModelVersion, ModelArtifact } from './entities.js';
import { RegistryError } from './errors.js';
import { parseFilter } from './filter.js';
import { listPage } from './list.js';

const str = (v: string) => ({ metadataType: 'MetadataStringValue', string_value: v });
const int = (v: string) => ({ metadataType: 'MetadataIntValue', int_value: v });
const dbl = (v: number) => ({ metadataType: 'MetadataDoubleValue', double_value: v });
const bool = (v: boolean) => ({ metadataType: 'MetadataBoolValue', bool_value: v });

const models = [
  { id: '1', name: 'mnist', state: 'LIVE', createTimeSinceEpoch: '100', lastUpdateTimeSinceEpoch: '900', customProperties: { framework: str('pytorch'), epochs: int('10'), accuracy: dbl(0.97), 'mlflow.source.type': str('notebook'), tuned: bool(true) } },
  { id: '2', name: 'resnet-tensorflow', state: 'ARCHIVED', createTimeSinceEpoch: '200', lastUpdateTimeSinceEpoch: '200', customProperties: { framework: str('tensorflow'), epochs: int('3'), accuracy: dbl(0.91) } },
  { id: '10', name: 'Bert', state: 'LIVE', createTimeSinceEpoch: '300', lastUpdateTimeSinceEpoch: '300', customProperties: { framework: str('pytorch'), tuned: bool(false) } },
];
const ids = (query: string, more = ''): string[] => listPage(models, new URL(`http://x/?filterQuery=${encodeURIComponent(query)}${more}`)).items.map((m) => String(m.id));
const rejects = (fn: () => unknown, re: RegExp): void => {
  assert.throws(fn, (e: unknown) => e instanceof RegistryError && e.http === 400 && re.test(e.message));
};

describe('the registry filterQuery', () => {
  it('compares own properties, numbers with decimal-string ids and times', () => {
    assert.deepEqual(ids("name = 'mnist'"), ['1']);
    assert.deepEqual(ids('state != "LIVE"'), ['2']);
    assert.deepEqual(ids("state <> 'ARCHIVED'"), ['1', '10']);
    assert.deepEqual(ids('id > 1'), ['2', '10']);
    assert.deepEqual(ids('createTimeSinceEpoch >= 200 AND createTimeSinceEpoch <= 300'), ['2', '10']);
  });

  it('reads custom properties, typed or not, backticked names and case-insensitive keywords', () => {
    assert.deepEqual(ids("framework.string_value = 'pytorch'"), ['1', '10']);
    assert.deepEqual(ids('framework = "pytorch"'), ['1', '10']);
    assert.deepEqual(ids('epochs.int_value > 5'), ['1']);
    assert.deepEqual(ids('accuracy > 0.95'), ['1']);
    assert.deepEqual(ids('accuracy.double_value < 0.95'), ['2']);
    assert.deepEqual(ids('tuned.bool_value = TRUE'), ['1']);
    assert.deepEqual(ids('tuned = false'), ['10']);
    assert.deepEqual(ids('`mlflow.source.type` = "notebook"'), ['1']);
    // a typed path of the wrong type matches nothing, as a missing property does
    assert.deepEqual(ids("framework.int_value = 3"), []);
    assert.deepEqual(ids("missing = 'x'"), []);
  });

  it('has LIKE, ILIKE, IN, AND, OR and parentheses', () => {
    assert.deepEqual(ids("name LIKE '%tensorflow%'"), ['2']);
    assert.deepEqual(ids("name like 'b%'"), []);
    assert.deepEqual(ids("name ILIKE 'b%'"), ['10']);
    assert.deepEqual(ids("name LIKE 'mnis_'"), ['1']);
    assert.deepEqual(ids("name IN ('mnist', 'Bert')"), ['1', '10']);
    assert.deepEqual(ids("(name = 'mnist' OR name = 'Bert') AND tuned = false"), ['10']);
    assert.deepEqual(ids("name = 'mnist' OR name = 'Bert' AND tuned = false"), ['1', '10']);
    assert.deepEqual(ids("name = 'it''s'"), []);
  });

  it('reads as the entity\'s own only what upstream maps as its own; other names are custom properties', () => {
    const withCard = [{ id: '1', name: 'm', owner: 'ada', description: 'own text', customProperties: { description: str('custom text') } }];
    const only = (q: string) => listPage(withCard, new URL(`http://x/?filterQuery=${encodeURIComponent(q)}`), undefined, () => filterableOf(RegisteredModel)).items.length;
    assert.equal(only("owner = 'ada'"), 1);
    assert.equal(only("description = 'custom text'"), 1);
    assert.equal(only("description = 'own text'"), 0);
    assert.ok(filterableOf(ModelArtifact).has('modelFormatName'));
    assert.ok(!filterableOf(RegisteredModel).has('readme'));
  });

  it('refuses a malformed query with a 400 that says what and where', () => {
    rejects(() => ids("name = "), /expected a value .* the end of the query/);
    rejects(() => ids("name == 'x'"), /expected a value .* position 7/);
    rejects(() => ids("(name = 'x'"), /expected "\)"/);
    rejects(() => ids("name = 'x"), /unterminated string/);
    rejects(() => ids("name ~ 'x'"), /unexpected character "~" at position 6/);
    rejects(() => ids("name = 'x' name = 'y'"), /expected AND, OR or the end/);
    rejects(() => ids("name LIKE 3"), /LIKE needs a string pattern/);
    rejects(() => ids("name IN ('a',)"), /expected a value/);
    assert.throws(() => parseFilter('   '), /empty/);
  });
});

describe('the registry list parameters', () => {
  const page = (q: string) => listPage(models, new URL(`http://x/?${q}`));
  it('orders by id, creation or update time, either way, and pages with a cursor', () => {
    assert.deepEqual(page('').items.map((m) => m.id), ['1', '2', '10']);
    assert.deepEqual(page('orderBy=LAST_UPDATE_TIME&sortOrder=DESC').items.map((m) => m.id), ['1', '10', '2']);
    const first = page('pageSize=2');
    assert.deepEqual([first.items.map((m) => m.id), first.size, first.pageSize], [['1', '2'], 2, 2]);
    assert.ok(first.nextPageToken);
    const second = page(`pageSize=2&nextPageToken=${first.nextPageToken}`);
    assert.deepEqual([second.items.map((m) => m.id), second.nextPageToken], [['10'], '']);
  });
  it('refuses bad parameters, naming them', () => {
    rejects(() => page('pageSize=0'), /^pageSize/);
    rejects(() => page('pageSize=ten'), /^pageSize/);
    rejects(() => page('orderBy=NAME'), /^orderBy/);
    rejects(() => page('sortOrder=UP'), /^sortOrder/);
    rejects(() => page('nextPageToken=garbage'), /^nextPageToken/);
  });
});

describe('registry request bodies', () => {
  it('keeps custom properties in upstream encoding and refuses a wrong type naming the property', () => {
    const b = readBody(RegisteredModel, { name: 'm', customProperties: { n: int('3'), d: dbl(1.5), s: str('x'), b: bool(true) } }, 'create');
    assert.deepEqual((b.customProperties as Record<string, unknown>).n, int('3'));
    rejects(() => readBody(RegisteredModel, { name: 'm', customProperties: { n: { metadataType: 'MetadataIntValue', int_value: 'three' } } }, 'create'), /customProperties\.n: int_value/);
    rejects(() => readBody(RegisteredModel, { name: 'm', customProperties: { d: { metadataType: 'MetadataDoubleValue', double_value: '1.5' } } }, 'create'), /customProperties\.d: double_value/);
    rejects(() => readBody(RegisteredModel, { name: 'm', customProperties: { s: { metadataType: 'MetadataStringValue', int_value: '1' } } }, 'create'), /customProperties\.s: unknown field "int_value"/);
    rejects(() => readBody(RegisteredModel, { name: 'm', customProperties: { x: { metadataType: 'MetadataFooValue' } } }, 'create'), /customProperties\.x: metadataType/);
  });
  it('requires, types and fixes fields as the OpenAPI document says', () => {
    rejects(() => readBody(RegisteredModel, {}, 'create'), /RegisteredModel\.name: required/);
    rejects(() => readBody(ModelVersion, { name: 'v1' }, 'create'), /ModelVersion\.registeredModelId: required/);
    rejects(() => readBody(ModelVersion, { name: 'v1', registeredModelId: 7 }, 'create'), /registeredModelId: expected an id/);
    rejects(() => readBody(RegisteredModel, { name: 'm', state: 'GONE' }, 'create'), /state: must be one of LIVE, ARCHIVED/);
    rejects(() => readBody(RegisteredModel, { name: 'm', colour: 'red' }, 'create'), /unknown field "colour"/);
    rejects(() => readBody(ModelArtifact, { artifactType: 'doc-artifact' }, 'create'), /artifactType: must be "model-artifact"/);
    rejects(() => readBody(RegisteredModel, { name: 'other' }, 'update', { name: 'm' }), /name: cannot be changed/);
    // what the server made comes back in whole entities and is ignored
    assert.deepEqual(readBody(RegisteredModel, { id: '4', name: 'm', createTimeSinceEpoch: '1', description: 'd' }, 'update', { name: 'm' }), { name: 'm', description: 'd' });
  });
});
