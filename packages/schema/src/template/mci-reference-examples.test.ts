/**
 * The templating examples of the MCI documentation, rendered exactly as documented.
 * @see https://github.com/Model-Context-Interface/docs documentation/schema-reference.mdx ("Templating Syntax")
 * @see https://github.com/Model-Context-Interface/docs documentation/templates.mdx
 */
import { describe, expect, it } from 'vitest';
import { renderStructured, renderTemplate, TemplateError } from '../index.ts';

const render = (template: string, props: Record<string, unknown> = {}, env: Record<string, string> = {}) =>
  renderTemplate(template, { props, env });

describe('schema reference: basic placeholders', () => {
  it('substitutes props, env and input (alias of props)', () => {
    const props = { location: 'Paris', username: 'ada', user: { name: 'Ada' } };
    const env = { API_KEY: 'k-1', DATABASE_URL: 'postgres://db' };
    expect(
      render(
        '{{props.location}}\n{{env.API_KEY}}\n{{input.username}}\n{{props.user.name}}\n{{env.DATABASE_URL}}',
        props,
        env,
      ),
    ).toBe('Paris\nk-1\nada\nAda\npostgres://db');
  });

  it('renders the "In JSON" example', () => {
    const config = {
      url: 'https://api.example.com/users/{{props.user_id}}',
      headers: { Authorization: 'Bearer {{env.ACCESS_TOKEN}}', 'X-Request-ID': '{{props.request_id}}' },
    };
    expect(
      renderStructured(config, { props: { user_id: 42, request_id: 'r-7' }, env: { ACCESS_TOKEN: 'tok' } }),
    ).toEqual({
      url: 'https://api.example.com/users/42',
      headers: { Authorization: 'Bearer tok', 'X-Request-ID': 'r-7' },
    });
  });
});

describe('schema reference: for and foreach loops', () => {
  it('For Loops example', () => {
    expect(render('@for(i in range(0, 3))\nItem {{i}}\n@endfor\n')).toBe('Item 0\nItem 1\nItem 2\n');
  });

  it('Foreach Loops: array example', () => {
    const props = { items: ['Apple', 'Banana', 'Cherry'] };
    expect(render('@foreach(item in props.items)\n- {{item}}\n@endforeach\n', props)).toBe(
      '- Apple\n- Banana\n- Cherry\n',
    );
  });

  it('Foreach Loops: object example', () => {
    const props = {
      users: [
        { name: 'Alice', age: 30 },
        { name: 'Bob', age: 25 },
      ],
    };
    expect(
      render('@foreach(user in props.users)\nName: {{user.name}}, Age: {{user.age}}\n@endforeach\n', props),
    ).toBe('Name: Alice, Age: 30\nName: Bob, Age: 25\n');
  });
});

describe('schema reference: conditional blocks', () => {
  const simple =
    '@if(props.premium)\nYou have premium access!\n@else\nUpgrade to premium for more features.\n@endif\n';
  it('Simple Conditional', () => {
    expect(render(simple, { premium: true })).toBe('You have premium access!\n');
    expect(render(simple, { premium: false })).toBe('Upgrade to premium for more features.\n');
    expect(render(simple, {})).toBe('Upgrade to premium for more features.\n');
  });

  const multiple =
    '@if(props.status == "active")\nStatus: Active\n@elseif(props.status == "pending")\nStatus: Pending approval\n@else\nStatus: Inactive\n@endif\n';
  it('Multiple Conditions', () => {
    expect(render(multiple, { status: 'active' })).toBe('Status: Active\n');
    expect(render(multiple, { status: 'pending' })).toBe('Status: Pending approval\n');
    expect(render(multiple, { status: 'closed' })).toBe('Status: Inactive\n');
  });

  const numeric = '@if(props.age > 18)\nAdult content available\n@else\nRestricted content\n@endif\n';
  it('Numeric Comparison', () => {
    expect(render(numeric, { age: 30 })).toBe('Adult content available\n');
    expect(render(numeric, { age: 18 })).toBe('Restricted content\n');
  });

  it('Text execution: Report with Conditionals (the space after an inline @else only separates it)', () => {
    const text =
      'Report for {{props.username}}\n@if(props.premium)Premium features enabled@else Standard features available @endif';
    expect(render(text, { username: 'ada', premium: true })).toBe('Report for ada\nPremium features enabled');
    expect(render(text, { username: 'ada', premium: false })).toBe(
      'Report for ada\nStandard features available ',
    );
  });

  it('Simple Message text execution', () => {
    expect(
      render(
        'Hello {{props.username}}! This message was generated on {{env.CURRENT_DATE}}.',
        { username: 'ada' },
        { CURRENT_DATE: '2026-11-21' },
      ),
    ).toBe('Hello ada! This message was generated on 2026-11-21.');
  });
});

describe('schema reference: JSON-native placeholders', () => {
  const body = (
    content: Record<string, unknown>,
    props: Record<string, unknown>,
    env: Record<string, string> = {},
  ) =>
    renderStructured({ type: 'json', content }, { props, env }) as {
      type: string;
      content: Record<string, unknown>;
    };

  it('Boolean Properties', () => {
    expect(
      body(
        { include_images: '{!!props.include_images!!}', case_sensitive: '{!!props.case_sensitive!!}' },
        { include_images: true, case_sensitive: false },
      ),
    ).toEqual({ type: 'json', content: { include_images: true, case_sensitive: false } });
  });

  it('Array Properties', () => {
    const props = { urls: ['https://a.com', 'https://b.com'], tags: ['urgent', 'review'] };
    expect(body({ urls: '{!!props.urls!!}', tags: '{!!props.tags!!}' }, props).content).toEqual(props);
  });

  it('Object Properties', () => {
    const props = { config: { debug: false, retries: 3 }, metadata: { version: '1.0' } };
    expect(body({ config: '{!!props.config!!}', metadata: '{!!props.metadata!!}' }, props).content).toEqual(
      props,
    );
  });

  it('Number Properties', () => {
    expect(
      body(
        { max_results: '{!!props.max_results!!}', quality: '{!!props.quality!!}' },
        { max_results: 100, quality: 0.95 },
      ).content,
    ).toEqual({
      max_results: 100,
      quality: 0.95,
    });
  });

  it('Mixed Native and String Placeholders', () => {
    const content = {
      enabled: '{!!props.enabled!!}',
      count: '{!!props.count!!}',
      name: '{{props.name}}',
      description: 'Search for {{props.query}}',
    };
    expect(body(content, { enabled: true, count: 50, name: 'My Search', query: 'testing' }).content).toEqual({
      enabled: true,
      count: 50,
      name: 'My Search',
      description: 'Search for testing',
    });
  });

  it('Invalid Usage: native placeholders mixed with text are errors', () => {
    const props = { enabled: true, path: 'x', value: 1 };
    for (const bad of [
      'Status: {!!props.enabled!!}',
      'https://api.com/{!!props.path!!}',
      '{!!props.value!!} and more text',
    ]) {
      expect(() => body({ bad }, props)).toThrowError(TemplateError);
      expect(() => body({ bad }, props)).toThrowError(/entire value of a field/);
    }
  });

  it('Missing Property is an error quoting the placeholder', () => {
    expect(() => body({ x: '{!!props.missing!!}' }, {})).toThrowError(
      "'{!!props.missing!!}' does not resolve",
    );
  });
});

describe('templates concept page', () => {
  it('Default values with a chain of fallbacks', () => {
    const url = "{{env.API_URL|env.FALLBACK_URL|'https://api.example.com'}}";
    expect(render(url, {}, {})).toBe('https://api.example.com');
    expect(render(url, {}, { FALLBACK_URL: 'https://fallback' })).toBe('https://fallback');
    expect(render(url, {}, { API_URL: 'https://primary', FALLBACK_URL: 'https://fallback' })).toBe(
      'https://primary',
    );
  });

  it('Defaults in cli args and file paths', () => {
    const execution = {
      command: "{{env.PYTHON_BIN|'python3'}}",
      args: [
        '--host',
        "{{props.host|'localhost'}}",
        '--port',
        "{{props.port|'8080'}}",
        '--verbose',
        "{{props.verbose|'false'}}",
      ],
      path: "{{env.CONFIG_DIR|'./config'}}/{{props.env|'development'}}.json",
    };
    expect(renderStructured(execution, { props: { port: 9000 }, env: {} })).toEqual({
      command: 'python3',
      args: ['--host', 'localhost', '--port', '9000', '--verbose', 'false'],
      path: './config/development.json',
    });
  });

  it('Simple Loop (list.txt)', () => {
    expect(render('Items:\n@for(i in range(0, 5))\n  {{i}}. Item number {{i}}\n@endfor\n')).toBe(
      'Items:\n  0. Item number 0\n  1. Item number 1\n  2. Item number 2\n  3. Item number 3\n  4. Item number 4\n',
    );
  });

  it('Loop in JSON-like format (inline: the body, trailing space included, repeats verbatim)', () => {
    expect(render('Numbers: @for(i in range(0, 10)){{i}} @endfor')).toBe('Numbers: 0 1 2 3 4 5 6 7 8 9 ');
  });

  it('Array Iteration (list.txt)', () => {
    const template = 'Available Items:\n@foreach(item in props.items)\n- {{item}}\n@endforeach\n';
    expect(render(template, { items: ['Apple', 'Banana', 'Cherry', 'Date'] })).toBe(
      'Available Items:\n- Apple\n- Banana\n- Cherry\n- Date\n',
    );
  });

  it('Complex Objects (users.txt)', () => {
    const template =
      'User List:\n\n@foreach(user in props.users)\nName: {{user.name}}\nEmail: {{user.email}}\nRole: {{user.role}}\n---\n@endforeach\n';
    const users = [
      { name: 'Alice', email: 'alice@example.com', role: 'admin' },
      { name: 'Bob', email: 'bob@example.com', role: 'user' },
      { name: 'Charlie', email: 'charlie@example.com', role: 'user' },
    ];
    expect(render(template, { users })).toBe(
      'User List:\n\nName: Alice\nEmail: alice@example.com\nRole: admin\n---\nName: Bob\nEmail: bob@example.com\nRole: user\n---\nName: Charlie\nEmail: charlie@example.com\nRole: user\n---\n',
    );
  });

  it('Nested Foreach (indented directives vanish with their indentation)', () => {
    const template =
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the documented template prints a dollar sign before a placeholder
      '@foreach(category in props.categories)\nCategory: {{category.name}}\n  @foreach(item in category.items)\n  - {{item.name}}: ${{item.price}}\n  @endforeach\n@endforeach\n';
    const categories = [
      {
        name: 'Fruit',
        items: [
          { name: 'Apple', price: 1 },
          { name: 'Pear', price: 2 },
        ],
      },
      { name: 'Bread', items: [{ name: 'Rye', price: 3.5 }] },
    ];
    expect(render(template, { categories })).toBe(
      'Category: Fruit\n  - Apple: $1\n  - Pear: $2\nCategory: Bread\n  - Rye: $3.5\n',
    );
  });

  it('XML Example (data.xml): @if inside @foreach sees the loop variable', () => {
    const template = `<?xml version="1.0"?>
<data>
  <timestamp>{{env.TIMESTAMP}}</timestamp>

  <users>
    @foreach(user in props.users)
    <user>
      <id>{{user.id}}</id>
      <name>{{user.name}}</name>
      <email>{{user.email}}</email>
      @if(user.active)
      <status>active</status>
      @else
      <status>inactive</status>
      @endif
    </user>
    @endforeach
  </users>
</data>
`;
    const users = [
      { id: 1, name: 'Alice', email: 'a@x.org', active: true },
      { id: 2, name: 'Bob', email: 'b@x.org', active: false },
    ];
    expect(render(template, { users }, { TIMESTAMP: 'T0' })).toBe(`<?xml version="1.0"?>
<data>
  <timestamp>T0</timestamp>

  <users>
    <user>
      <id>1</id>
      <name>Alice</name>
      <email>a@x.org</email>
      <status>active</status>
    </user>
    <user>
      <id>2</id>
      <name>Bob</name>
      <email>b@x.org</email>
      <status>inactive</status>
    </user>
  </users>
</data>
`);
  });

  it('Multiple Conditions (report.txt) and Numeric Comparison (access.txt)', () => {
    const report =
      'Report for: {{props.username}}\n\n@if(props.status == "active")\nStatus: Active - All systems operational\n@elseif(props.status == "pending")\nStatus: Pending - Awaiting approval\n@elseif(props.status == "suspended")\nStatus: Suspended - Contact support\n@else\nStatus: Unknown\n@endif\n';
    expect(render(report, { username: 'ada', status: 'suspended' })).toBe(
      'Report for: ada\n\nStatus: Suspended - Contact support\n',
    );
    const access =
      'User: {{props.username}}\n\n@if(props.age >= 18)\n✓ Access granted to adult content\n@else\n✗ Access restricted - Must be 18 or older\n@endif\n\n@if(props.credits > 0)\nAvailable credits: {{props.credits}}\n@else\nNo credits remaining - Please purchase more\n@endif\n';
    expect(render(access, { username: 'ada', age: 18, credits: 0 })).toBe(
      'User: ada\n\n✓ Access granted to adult content\n\nNo credits remaining - Please purchase more\n',
    );
  });

  it('status_check text execution', () => {
    const text =
      '@if(props.online)Server is online and responding@else Server is offline or not responding@endif';
    expect(render(text, { online: true })).toBe('Server is online and responding');
    expect(render(text, { online: false })).toBe('Server is offline or not responding');
  });

  it('config.xml with defaults and conditionals', () => {
    const template = `<configuration>
  <database>
    <host>{{env.DB_HOST|'localhost'}}</host>
    <port>{{env.DB_PORT|'5432'}}</port>
  </database>
  @if(props.enable_cache)
  <cache><ttl>{{props.cache_ttl|'3600'}}</ttl></cache>
  @endif
  @if(props.environment == "production")
  <logging><level>error</level></logging>
  @else
  <logging><level>debug</level></logging>
  @endif
</configuration>`;
    expect(
      render(template, { enable_cache: true, environment: 'production' }, { DB_PORT: '6543' }),
    ).toBe(`<configuration>
  <database>
    <host>localhost</host>
    <port>6543</port>
  </database>
  <cache><ttl>3600</ttl></cache>
  <logging><level>error</level></logging>
</configuration>`);
  });
});
