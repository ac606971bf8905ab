# {{props.title}}

@foreach(row in props.rows)
- {{row.label}}: {{row.value}}@if(row.value > 100) (high)@endif
@endforeach
