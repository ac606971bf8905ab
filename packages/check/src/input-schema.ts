import type { Symbol as TsSymbol, Type, TypeChecker, TypeReference, UnionType } from 'typescript';
import { ts } from './typescript.ts';

/** A JSON Schema as {@link typeToJsonSchema} makes it. */
export type DerivedSchema = Record<string, unknown>;

/** Deepest nesting of object and array types turned into a schema. */
const MAX_DEPTH = 8;

/**
 * Turns the TypeScript type of a skill's input into a JSON Schema (draft-07). Supported: `string`,
 * `number`, `boolean`, `null`, `any`/`unknown` (no constraint), string, number and boolean literals
 * and unions of them (`enum`), arrays and tuples-as-arrays (`T[]`, `Array<T>`), object literal types
 * and interfaces (their properties; `?` ones are optional), and other unions (`anyOf`).
 * @throws TypeError naming the part that has no JSON Schema (a function, a `Date`, a class, a
 *   generic, nesting past 8 levels).
 */
export function typeToJsonSchema(checker: TypeChecker, type: Type, path = 'input'): DerivedSchema {
  return convert(checker, type, path, 0);
}

function convert(checker: TypeChecker, type: Type, path: string, depth: number): DerivedSchema {
  if (depth > MAX_DEPTH) throw new TypeError(`${path}: nested deeper than ${MAX_DEPTH} levels`);
  const flags = type.flags;
  if (flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return {};
  if (flags & ts.TypeFlags.String) return { type: 'string' };
  if (flags & ts.TypeFlags.Number) return { type: 'number' };
  if (flags & ts.TypeFlags.Boolean) return { type: 'boolean' };
  if (flags & ts.TypeFlags.Null) return { type: 'null' };
  if (type.isStringLiteral() || type.isNumberLiteral()) return { const: type.value };
  if (flags & ts.TypeFlags.BooleanLiteral) return { const: checker.typeToString(type) === 'true' };
  if (type.isUnion()) return union(checker, type, path, depth);
  if (checker.isArrayType(type) || checker.isTupleType(type)) {
    const [item] = checker.getTypeArguments(type as TypeReference);
    if (checker.isTupleType(type))
      throw new TypeError(`${path}: tuples have no JSON Schema here; use an array`);
    return { type: 'array', items: item ? convert(checker, item, `${path}[]`, depth + 1) : {} };
  }
  if (flags & ts.TypeFlags.Object && checker.getSignaturesOfType(type, ts.SignatureKind.Call).length === 0) {
    const symbol = type.getSymbol();
    const plain =
      !symbol ||
      symbol.flags & (ts.SymbolFlags.TypeLiteral | ts.SymbolFlags.Interface | ts.SymbolFlags.ObjectLiteral);
    if (plain && !isBuiltIn(symbol)) return object(checker, type, path, depth);
  }
  throw new TypeError(`${path}: the type ${checker.typeToString(type)} has no JSON Schema`);
}

function union(checker: TypeChecker, type: UnionType, path: string, depth: number): DerivedSchema {
  const members = type.types.filter((member) => !(member.flags & ts.TypeFlags.Undefined));
  // `boolean` is the union `true | false`: an optional one (`undefined | true | false`) is read here.
  const booleans = members.filter((member) => member.flags & ts.TypeFlags.BooleanLiteral);
  const others = members.filter((member) => !(member.flags & ts.TypeFlags.BooleanLiteral));
  if (booleans.length === 2 && others.length === 0) return { type: 'boolean' };
  if (members.length === 1) return convert(checker, members[0]!, path, depth);
  const schemas = [
    ...others.map((member) => convert(checker, member, path, depth)),
    ...(booleans.length === 2
      ? [{ type: 'boolean' }]
      : booleans.map((b) => convert(checker, b, path, depth))),
  ];
  if (schemas.every((schema) => 'const' in schema)) return { enum: schemas.map((schema) => schema.const) };
  return { anyOf: schemas };
}

function object(checker: TypeChecker, type: Type, path: string, depth: number): DerivedSchema {
  const properties: Record<string, DerivedSchema> = {};
  const required: string[] = [];
  for (const property of checker.getPropertiesOfType(type)) {
    const name = property.getName();
    const declaration = property.valueDeclaration ?? property.declarations?.[0];
    const propertyType = declaration
      ? checker.getTypeOfSymbolAtLocation(property, declaration)
      : checker.getDeclaredTypeOfSymbol(property);
    properties[name] = convert(checker, propertyType, `${path}.${name}`, depth + 1);
    if (!(property.flags & ts.SymbolFlags.Optional)) required.push(name);
  }
  return { type: 'object', properties, ...(required.length > 0 && { required }) };
}

/** Types of the standard library (`Date`, `Map`, `Promise`...) are not plain data. */
function isBuiltIn(symbol: TsSymbol | undefined): boolean {
  const file = symbol?.declarations?.[0]?.getSourceFile().fileName ?? '';
  return /[\\/]lib\.[\w.]*\.d\.ts$/.test(file);
}
